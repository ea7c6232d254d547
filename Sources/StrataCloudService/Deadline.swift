import Synchronization

/// The request ran past ``CloudServiceConfiguration/requestDeadline``.
struct DeadlineExceeded: Error, Hashable, Sendable {}

/// Runs work with a deadline that holds even when the work ignores cancellation.
///
/// A structured timeout (a task group racing a sleep) waits for the cancelled work to return,
/// so a query stuck on a dead database connection would hold the answer forever. Here the work
/// runs in a task of its own: at the deadline the caller gets ``DeadlineExceeded`` at once and
/// the work is cancelled and left to end by itself.
enum Deadline {
    static func run<T: Sendable>(
        within limit: Duration, _ work: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let outcome = Outcome<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                outcome.start(continuation)
                let worker = Task {
                    do { outcome.finish(.success(try await work())) } catch { outcome.finish(.failure(error)) }
                }
                let timer = Task {
                    try? await Task.sleep(for: limit)
                    outcome.finish(.failure(DeadlineExceeded()))
                }
                outcome.track(worker: worker, timer: timer)
            }
        } onCancel: {
            outcome.finish(.failure(CancellationError()))
        }
    }

    /// The first result wins; the other side is cancelled.
    private final class Outcome<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var result: Result<T, any Error>?
            var worker: Task<Void, Never>?
            var timer: Task<Void, Never>?
        }

        private let state = Mutex(State())

        func start(_ continuation: CheckedContinuation<T, any Error>) {
            let early = state.withLock { state -> Result<T, any Error>? in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            if let early { continuation.resume(with: early) }
        }

        func track(worker: Task<Void, Never>, timer: Task<Void, Never>) {
            let done = state.withLock { state in
                state.worker = worker
                state.timer = timer
                return state.result != nil
            }
            if done {
                worker.cancel()
                timer.cancel()
            }
        }

        func finish(_ result: Result<T, any Error>) {
            let (continuation, worker, timer) = state.withLock {
                state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Task<Void, Never>?) in
                guard state.result == nil else { return (nil, nil, nil) }
                state.result = result
                defer { state.continuation = nil }
                return (state.continuation, state.worker, state.timer)
            }
            worker?.cancel()
            timer?.cancel()
            continuation?.resume(with: result)
        }
    }
}
