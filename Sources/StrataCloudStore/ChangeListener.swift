import Foundation
import Logging
import PostgresNIO
import Synchronization

/// One LISTEN connection per store, fanned out to the users subscribed in this process.
///
/// Writers call `strata_cloud.notify_zone_change`, whose payload names who can see the zone (a
/// JSON array of users, or `*`). PostgreSQL delivers notifications at commit, in commit order,
/// to sessions listening at the time, and keeps none: after a reconnect every subscriber gets a
/// hint, since what was sent meanwhile is gone.
final class ChangeListener: Sendable {
    static let channel = "strata_cloud"

    private struct Subscriber {
        var user: String
        var continuation: AsyncStream<Void>.Continuation
    }

    private struct State {
        var subscribers: [UUID: Subscriber] = [:]
        var task: Task<Void, Never>?
        var stopped = false
    }

    private let client: PostgresClient
    private let logger: Logger
    private let state = Mutex(State())

    init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// A stream of hints for `user`; the newest is kept while nobody reads.
    func subscribe(user: String) -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let key = UUID()
        let startNow = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.subscribers[key] = Subscriber(user: user, continuation: continuation)
            return state.task == nil
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: key) }
        }
        if startNow { start() }
        return stream
    }

    /// Stops listening and ends every stream.
    func stop() {
        let (task, subscribers) = state.withLock { state in
            state.stopped = true
            defer { state.subscribers = [:] }
            return (state.task, Array(state.subscribers.values))
        }
        task?.cancel()
        for subscriber in subscribers { subscriber.continuation.finish() }
    }

    private func start() {
        let task = Task { [client, logger, weak self] in
            var delay: Duration = .milliseconds(50)
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.listen(on: Self.channel) { notifications in
                            // Listening now: whatever changed before is fetched on this hint.
                            self?.hint { _ in true }
                            delay = .milliseconds(50)
                            for try await notification in notifications {
                                let users = Self.users(in: notification.payload)
                                self?.hint { users?.contains($0) ?? true }
                            }
                        }
                    }
                } catch {
                    if Task.isCancelled { break }
                    logger.warning("change notifications interrupted: \(error); listening again in \(delay)")
                }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(5))
            }
        }
        state.withLock { state in
            if state.stopped { task.cancel() } else { state.task = task }
        }
    }

    private func hint(_ matches: (String) -> Bool) {
        let continuations = state.withLock { state in state.subscribers.values.filter { matches($0.user) }.map(\.continuation) }
        for continuation in continuations { continuation.yield() }
    }

    /// The users a payload names; nil for everyone (`*`, or a payload this version cannot read).
    static func users(in payload: String) -> Set<String>? {
        guard payload != "*", let users = try? JSONDecoder().decode([String].self, from: Data(payload.utf8)) else { return nil }
        return Set(users)
    }
}
