import Testing

/// Polls a condition that another thread makes true, with a bound (yielding, not sleeping).
/// Records an issue when the condition is still false after ten seconds.
package func waitUntil(_ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not met in time", sourceLocation: sourceLocation)
            return
        }
        await Task.yield()
    }
}

/// Waits until an async `condition` holds, for at most ten seconds, yielding between checks;
/// the condition may read a database with the async APIs, never blocking a cooperative thread.
package func waitUntil(
    _ condition: () async throws -> Bool, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while try await !condition() {
        if ContinuousClock.now > deadline {
            Issue.record("condition not met in time", sourceLocation: sourceLocation)
            return
        }
        await Task.yield()
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
