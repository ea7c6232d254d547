import Testing

/// How long a test waits in real time for work it cannot drive itself (another thread's
/// signal, an engine's scheduled task) before it records an issue.
///
/// Long on purpose: the whole suite runs in parallel on two cores, and work that takes
/// milliseconds alone has taken more than ten seconds there (CI). A wait ends as soon as its
/// condition holds, so the bound costs time only when a test fails; it stays under the
/// shortest test time limit (one minute), so a failing wait is reported, not cut off.
package let realTimeBound: Duration = .seconds(45)

/// Between checks of a polled condition: a yield for the first checks, then a millisecond's
/// sleep, so that a test waiting long does not take a core from the work it waits for.
package func pause(afterCheck check: Int) async throws {
    if check < 100 {
        await Task.yield()
    } else {
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// Polls a condition that another thread makes true, with a bound of ``realTimeBound``.
/// Records an issue when the condition is still false then.
package func waitUntil(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now.advanced(by: realTimeBound)
    var check = 0
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not met in time", sourceLocation: sourceLocation)
            return
        }
        try await pause(afterCheck: check)
        check += 1
    }
}

/// Waits until an async `condition` holds, for at most ``realTimeBound``, pausing between
/// checks; the condition may read a database with the async APIs, never blocking a
/// cooperative thread.
package func waitUntil(
    _ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = ContinuousClock.now.advanced(by: realTimeBound)
    var check = 0
    while try await !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not met in time", sourceLocation: sourceLocation)
            return
        }
        try await pause(afterCheck: check)
        check += 1
    }
}

/// The first element of `iterator` that satisfies `condition`, reading at most `limit`
/// elements; nil when the sequence ends or the limit is reached first.
package func nextValue<I: AsyncIteratorProtocol>(
    _ iterator: inout I, where condition: (I.Element) -> Bool, limit: Int = 1000
) async throws -> I.Element? {
    for _ in 0..<limit {
        guard let element = try await iterator.next() else { return nil }
        if condition(element) { return element }
    }
    return nil
}
