import Dispatch
import Foundation

/// Waits for a semaphore without blocking a cooperative thread. Returns false on timeout.
///
/// The wait runs on a thread of its own rather than a dispatch worker: on Linux, libdispatch
/// adds workers only slowly when its few (one per core) are blocked, and the connections of
/// the queues and pools under test run on those workers.
///
/// The default bound is long on purpose: the whole suite runs in parallel on two cores, and a
/// signal that comes in milliseconds alone has come after more than 10 seconds there (CI). A
/// wait ends as soon as the signal comes, so the bound costs time only when a test fails; it
/// stays under the shortest test time limit (one minute).
package func wait(for semaphore: DispatchSemaphore, seconds: Double = 45) async -> Bool {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
        }
        thread.start()
    }
}

/// Runs blocking code on a thread of its own (never a cooperative or dispatch worker) and
/// awaits its result.
package func runOnBackgroundThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

/// Thrown by ``waitOrThrow(_:seconds:)`` when a semaphore is not signalled in time.
package struct TimeoutError: Error, CustomStringConvertible {
    package init() {}
    package var description: String { "timed out waiting for a semaphore" }
}

/// Throws when the semaphore is not signalled in time, so a closure that waits fails the test
/// instead of hanging it. The default bound is that of ``wait(for:seconds:)``, for its reason.
package func waitOrThrow(_ semaphore: DispatchSemaphore, seconds: Double = 45) throws {
    if semaphore.wait(timeout: .now() + seconds) != .success { throw TimeoutError() }
}
