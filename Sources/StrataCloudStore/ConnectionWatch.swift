import PostgresNIO
import StrataCloud
import Synchronization

/// Runs one transaction's work so that the connection dying under it fails the request at
/// once, retryably, even when the work itself never hears of it.
///
/// A query sent down a connection PostgreSQL has just closed (a restart, a terminated backend)
/// can wait for an answer forever. The work therefore runs in a task of its own, and the caller
/// waits for whichever comes first: the work's result, or the connection's close while the
/// work holds it (checked every ``checkInterval``). In the second case the caller gets `serviceUnavailable` and the work is
/// cancelled and left to end by itself.
final class ConnectionWatch<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var worker: Task<Void, Never>?
        var monitor: Task<Void, Never>?
    }

    /// How often a running transaction's connection is checked.
    static var checkInterval: Duration { .milliseconds(200) }

    private let state = Mutex(State())

    static func run(_ work: @escaping @Sendable (ConnectionWatch<T>) async throws -> T) async throws -> T {
        let watch = ConnectionWatch<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                watch.start(continuation)
                let worker = Task {
                    do { watch.finish(.success(try await work(watch))) } catch { watch.finish(.failure(error)) }
                }
                watch.track(worker)
            }
        } onCancel: {
            watch.finish(.failure(CancellationError()))
        }
    }

    /// Fails the watched work within ``checkInterval`` of `connection` closing. A poll, not a
    /// callback on the connection's close future: connections outlive millions of requests,
    /// and a callback per request would pile up on each until it closed.
    func watch(_ connection: PostgresConnection) {
        let monitor = Task { [self] in
            while !Task.isCancelled {
                do { try await Task.sleep(for: Self.checkInterval) } catch { return }
                if connection.isClosed {
                    finish(.failure(CloudError.serviceUnavailable(retryAfter: StoreFailure.retryDelay)))
                    return
                }
            }
        }
        let done = state.withLock { state in
            state.monitor = monitor
            return state.result != nil
        }
        if done { monitor.cancel() }
    }

    private func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let result = state.result { return result }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    private func track(_ worker: Task<Void, Never>) {
        let done = state.withLock { state in
            state.worker = worker
            return state.result != nil
        }
        if done { worker.cancel() }
    }

    private func finish(_ result: Result<T, any Error>) {
        let (continuation, worker, monitor) = state.withLock {
            state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?, Task<Void, Never>?) in
            guard state.result == nil else { return (nil, nil, nil) }
            state.result = result
            defer { state.continuation = nil }
            return (state.continuation, state.worker, state.monitor)
        }
        monitor?.cancel()
        if case .failure = result { worker?.cancel() }
        continuation?.resume(with: result)
    }
}
