import Synchronization

/// What wakes a running engine's schedule: a local commit that logged changes, a change hint
/// from the cloud, the poll timer. Reasons that arrive while the schedule is busy are kept and
/// coalesced, so a burst of commits wakes it once; nothing else wakes it, so an idle engine
/// sleeps until its next poll.
///
/// It holds no reference to the engine: the commit hook, the hint listener and the poll timer
/// ring it, and an engine released without ``SyncEngine/stop()`` is freed.
final class ScheduleSignal: Sendable {
    enum Reason: Hashable, Sendable {
        /// A local transaction logged changes to synced tables.
        case localChange
        /// The cloud says something changed.
        case hint
        /// The poll interval passed, or the schedule started.
        case poll
    }

    private struct State {
        var pending: Set<Reason> = []
        var doorbell: AsyncStream<Void>.Continuation?
    }

    private let state = Mutex(State())

    func ring(_ reason: Reason) {
        let doorbell = state.withLock { state in
            state.pending.insert(reason)
            return state.doorbell
        }
        doorbell?.yield()
    }

    /// The reasons rung since the last call.
    func take() -> Set<Reason> {
        state.withLock { state in
            defer { state.pending.removeAll() }
            return state.pending
        }
    }

    /// A new stream of rings for a schedule that starts; the previous one ends.
    func makeDoorbell() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let (previous, ringing) = state.withLock { state in
            defer { state.doorbell = continuation }
            return (state.doorbell, !state.pending.isEmpty)
        }
        previous?.finish()
        if ringing { continuation.yield() }
        return stream
    }

    /// Ends the current stream (the schedule stops).
    func finish() {
        let doorbell = state.withLock { state in
            defer { state.doorbell = nil }
            return state.doorbell
        }
        doorbell?.finish()
    }
}
