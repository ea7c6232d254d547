import Foundation
import Synchronization

/// The open change streams, so the service can end them all: on graceful shutdown (the HTTP
/// server waits for open responses, and a change stream never ends by itself) or on request.
final class ChangeStreams: Sendable {
    private struct State {
        var streams: [UUID: (user: String, continuation: AsyncStream<Void>.Continuation)] = [:]
        var perUser: [String: Int] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// A signal that finishes when the stream must end; already finished once the service is
    /// shutting down. Registered before the response head goes out, so a client that saw the
    /// head is covered by ``closeAll()``.
    /// Nil when `user` holds `limit` open streams already.
    func open(user: String, limit: Int) -> (id: UUID, ended: AsyncStream<Void>)? {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let id = UUID()
        let outcome: Bool? = state.withLock { state in
            if state.closed { return true }
            guard state.perUser[user, default: 0] < limit else { return nil }
            state.perUser[user, default: 0] += 1
            state.streams[id] = (user, continuation)
            return false
        }
        guard let closed = outcome else { return nil }
        if closed { continuation.finish() }
        return (id, stream)
    }

    /// Forgets a stream that ended.
    func remove(_ id: UUID) {
        state.withLock { state in
            guard let (user, _) = state.streams.removeValue(forKey: id) else { return }
            let left = state.perUser[user, default: 1] - 1
            state.perUser[user] = left > 0 ? left : nil
        }
    }

    /// Ends every open stream; with `permanently`, streams opened later end at once too.
    func closeAll(permanently: Bool) {
        let open = state.withLock { state in
            if permanently { state.closed = true }
            defer {
                state.streams.removeAll()
                state.perUser.removeAll()
            }
            return state.streams.values.map(\.continuation)
        }
        for continuation in open { continuation.finish() }
    }

    /// How many streams are open.
    var count: Int { state.withLock { $0.streams.count } }
}
