import Synchronization

/// Runs async jobs one at a time, in the order they were submitted: the engine sends one batch
/// and applies one fetch at a time.
final class SerialWork: Sendable {
    private let tail = Mutex<Task<Void, Never>?>(nil)

    func run<T: Sendable>(_ job: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = tail.withLock { tail -> Task<Result<T, any Error>, Never> in
            let previous = tail
            let task = Task<Result<T, any Error>, Never> {
                await previous?.value
                do { return .success(try await job()) } catch { return .failure(error) }
            }
            tail = Task { _ = await task.value }
            return task
        }
        return try await task.value.get()
    }
}
