import Synchronization

/// Runs async jobs one at a time, in the order they were submitted: the engine runs one send or
/// one fetch at a time (a send keeps at most two requests of its own in flight).
///
/// Each job runs in a task of its own (so a job waits for the one before it without blocking
/// its caller's task), and cancellation reaches it: cancelling the caller's task cancels its
/// job, and ``cancelAll()`` cancels every job submitted and not finished (``SyncEngine/stop()``).
final class SerialWork: Sendable {
    private struct State {
        var tail: Task<Void, Never>?
        var nextJob = 0
        var cancellers: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Mutex(State())

    func run<T: Sendable>(_ job: @escaping @Sendable () async throws -> T) async throws -> T {
        let (id, task) = state.withLock { state -> (Int, Task<Result<T, any Error>, Never>) in
            let previous = state.tail
            let task = Task<Result<T, any Error>, Never> {
                await previous?.value
                do {
                    // Cancelled while it waited its turn: it never starts.
                    try Task.checkCancellation()
                    // Everything the engine queues is its own work: marked for traces and
                    // triggers (`SyncEngine.isSynchronizing`).
                    return .success(try await SynchronizationContext.$isSynchronizing.withValue(true) { try await job() })
                } catch {
                    return .failure(error)
                }
            }
            state.tail = Task { _ = await task.value }
            let id = state.nextJob
            state.nextJob += 1
            state.cancellers[id] = { task.cancel() }
            return (id, task)
        }
        defer { _ = state.withLock { $0.cancellers.removeValue(forKey: id) } }
        return try await withTaskCancellationHandler {
            try await task.value.get()
        } onCancel: {
            task.cancel()
        }
    }

    /// Cancels every job submitted and not finished, the running one included.
    func cancelAll() {
        let cancellers = state.withLock { Array($0.cancellers.values) }
        for cancel in cancellers { cancel() }
    }
}
