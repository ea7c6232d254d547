import Foundation
import Synchronization

/// The open change streams, so the service can end them all: on graceful shutdown (the HTTP
/// server waits for open responses, and a change stream never ends by itself) or on request.
final class ChangeStreams: Sendable {
    private struct State {
        var streams: [UUID: AsyncStream<Void>.Continuation] = [:]
        var closed = false
    }

    private let state = Mutex(State())

    /// A signal that finishes when the stream must end; already finished once the service is
    /// shutting down. Registered before the response head goes out, so a client that saw the
    /// head is covered by ``closeAll()``.
    func open() -> (id: UUID, ended: AsyncStream<Void>) {
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        let id = UUID()
        let closed = state.withLock { state in
            if !state.closed { state.streams[id] = continuation }
            return state.closed
        }
        if closed { continuation.finish() }
        return (id, stream)
    }

    /// Forgets a stream that ended.
    func remove(_ id: UUID) {
        _ = state.withLock { $0.streams.removeValue(forKey: id) }
    }

    /// Ends every open stream; with `permanently`, streams opened later end at once too.
    func closeAll(permanently: Bool) {
        let open = state.withLock { state in
            if permanently { state.closed = true }
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for continuation in open { continuation.finish() }
    }

    /// How many streams are open.
    var count: Int { state.withLock { $0.streams.count } }
}
