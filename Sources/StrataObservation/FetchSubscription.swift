/// The observation started by `load(_:)` on a fetch wrapper's projected value.
///
/// Await ``task`` to tie the observation to the awaiting task's lifetime: when that task is
/// cancelled, the observation stops (as `.task { try await $rows.load(query).task }` does in a
/// SwiftUI view).
public struct FetchSubscription: Sendable {
    private let end: @Sendable () -> Void
    private let wait: @Sendable () async -> Void
    private let active: @Sendable () -> Bool

    init<Value>(store: FetchStore<Value>, generation: UInt64) {
        end = { [weak store] in store?.cancel(generation: generation) }
        wait = { [weak store] in await store?.waitForEnd(generation: generation) }
        active = { [weak store] in store?.isActive(generation: generation) ?? false }
    }

    /// Returns when the observation ends (cancelled, or replaced by another `load`); cancelling
    /// the awaiting task cancels the observation and throws `CancellationError`.
    public var task: Void {
        get async throws {
            let end = self.end
            await withTaskCancellationHandler {
                await wait()
            } onCancel: {
                end()
            }
            try Task.checkCancellation()
        }
    }

    /// Whether the observation still runs.
    public var isActive: Bool { active() }

    /// Stops the observation; the wrapper keeps its last value.
    public func cancel() {
        end()
    }
}
