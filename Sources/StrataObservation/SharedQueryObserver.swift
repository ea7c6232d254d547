import StrataSQLite
import Synchronization

/// One ``QueryObserver`` shared by every subscriber of the same request on the same database:
/// wrappers with equal requests cost one registration and one fetch per commit, not one each.
///
/// The first subscriber starts it; later subscribers get the last value at once and every
/// value after; the last one to leave stops it.
final class SharedQueryObserver<Value: Sendable>: Sendable {
    typealias Subscriber = @Sendable (Result<Value, any Error>, _ commitTag: UInt64) -> Void

    private struct State {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 1
        var lastResult: (result: Result<Value, any Error>, commitTag: UInt64)?
        var queryObserver: QueryObserver<Value>?
    }

    private let state = Mutex(State())
    private let key: SharedQueryObserverKey

    init(key: SharedQueryObserverKey) {
        self.key = key
    }

    /// Adds a subscriber, starting the observation if it is the first. `seed` is a value the
    /// subscriber just read, with its region and commit tag: a new observation starts from it
    /// rather than fetching it again (see ``QueryObserver/start(seed:)``).
    func subscribe(
        writer: any DatabaseWriter, fetch: @escaping @Sendable (Database) throws -> Value,
        seed: FetchSeed<Value>?, _ subscriber: @escaping Subscriber
    ) -> UInt64 {
        let (id, last, observerToStart) = state.withLock {
            state -> (UInt64, (result: Result<Value, any Error>, commitTag: UInt64)?, QueryObserver<Value>?) in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = subscriber
            if state.queryObserver == nil {
                let queryObserver = QueryObserver(writer: writer, fetch: fetch) { [weak self] result, commitTag in
                    self?.broadcast(result, commitTag: commitTag)
                }
                state.queryObserver = queryObserver
                if let seed { state.lastResult = (.success(seed.value), seed.commitTag) }
                return (id, nil, queryObserver)
            }
            return (id, state.lastResult, nil)
        }
        if let last { subscriber(last.result, last.commitTag) }
        observerToStart?.start(seed: seed.map { ($0.region, $0.commitTag) })
        return id
    }

    func unsubscribe(_ id: UInt64) {
        let queryObserver = state.withLock { state -> QueryObserver<Value>? in
            state.subscribers[id] = nil
            guard state.subscribers.isEmpty else { return nil }
            defer { state.queryObserver = nil }
            return state.queryObserver
        }
        if let queryObserver {
            queryObserver.cancel()
            SharedQueryObserverRegistry.shared.remove(key, ifSameAs: self)
        }
    }

    private func broadcast(_ result: Result<Value, any Error>, commitTag: UInt64) {
        let subscribers = state.withLock { state in
            state.lastResult = (result, commitTag)
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber(result, commitTag) }
    }
}

struct SharedQueryObserverKey: Hashable, Sendable {
    var database: ObjectIdentifier
    var request: AnyHashableSendable
}

/// A type-erased request key that stays `Sendable` without `@unchecked`: it keeps the value as
/// `any Hashable & Sendable` and borrows `AnyHashable` only to compare across types.
struct AnyHashableSendable: Hashable, Sendable {
    let value: any Hashable & Sendable
    init(_ value: some Hashable & Sendable) {
        self.value = value
    }

    static func == (lhs: Self, rhs: Self) -> Bool {
        AnyHashable(lhs.value) == AnyHashable(rhs.value)
    }

    func hash(into hasher: inout Hasher) {
        AnyHashable(value).hash(into: &hasher)
    }
}

/// The process-wide table of shared query observers. Entries leave when their last subscriber
/// does, so it holds only observations in use.
final class SharedQueryObserverRegistry: Sendable {
    static let shared = SharedQueryObserverRegistry()
    private let entries = Mutex<[SharedQueryObserverKey: AnyObject & Sendable]>([:])

    func sharedObserver<Value: Sendable>(for key: SharedQueryObserverKey, as type: Value.Type) -> SharedQueryObserver<Value> {
        entries.withLock { entries in
            if let existing = entries[key] as? SharedQueryObserver<Value> { return existing }
            let sharedObserver = SharedQueryObserver<Value>(key: key)
            entries[key] = sharedObserver
            return sharedObserver
        }
    }

    func remove(_ key: SharedQueryObserverKey, ifSameAs sharedObserver: AnyObject) {
        entries.withLock { entries in
            if entries[key] === sharedObserver { entries[key] = nil }
        }
    }

    /// The number of shared query observers of one database.
    func count(database: ObjectIdentifier) -> Int {
        entries.withLock { $0.keys.filter { $0.database == database }.count }
    }
}

/// Subscribes to the shared observation of `request`; the returned token unsubscribes when
/// cancelled or released.
func subscribeShared<Request: FetchKeyRequest>(
    to request: Request, in database: any DatabaseWriter, seed: FetchSeed<Request.Value>?,
    _ subscriber: @escaping @Sendable (Result<Request.Value, any Error>, _ commitTag: UInt64) -> Void
) -> SharedSubscriptionToken {
    let key = SharedQueryObserverKey(database: ObjectIdentifier(database), request: AnyHashableSendable(request))
    let sharedObserver = SharedQueryObserverRegistry.shared.sharedObserver(for: key, as: Request.Value.self)
    let id = sharedObserver.subscribe(writer: database, fetch: { try request.fetch($0) }, seed: seed, subscriber)
    return SharedSubscriptionToken { sharedObserver.unsubscribe(id) }
}

/// Ends a subscription once, when cancelled or released.
final class SharedSubscriptionToken: Sendable {
    private let onCancel = Mutex<(@Sendable () -> Void)?>(nil)

    init(_ onCancel: @escaping @Sendable () -> Void) {
        self.onCancel.withLock { $0 = onCancel }
    }

    deinit { cancel() }

    func cancel() {
        let action = onCancel.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }
}

/// A value read just before subscribing: the region it read and the number of commits
/// announced before the read.
struct FetchSeed<Value: Sendable>: Sendable {
    var value: Value
    var region: DatabaseRegion
    var commitTag: UInt64
}
