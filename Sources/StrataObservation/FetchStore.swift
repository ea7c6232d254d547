import Observation
import StrataSQLite
import Synchronization

/// The state behind `@FetchAll`, `@FetchOne` and `@Fetch`: the current value, the last load
/// error, whether a load is in progress, and the observation that keeps them fresh.
///
/// It is `Observable`: reading ``value`` inside `withObservationTracking` (or a SwiftUI body on
/// Apple platforms) tracks it, and each new value triggers the tracking's change handler.
/// Values are written from the observation's task and read from anywhere, so the storage is
/// guarded by a lock.
final class FetchStore<Value: Sendable>: Observable, Sendable {
    private struct State {
        var value: Value
        var loadError: (any Error)?
        var isLoading = false
        var subscription: SharedSubscriptionToken?
        var generation: UInt64 = 0
        /// Commits announced before the current value was read; results read from an older or
        /// equal point add nothing and are dropped (the shared observation's first fetch
        /// repeats the wrapper's own initial load).
        var valueCommitTag: UInt64 = 0
        var valueContinuations: [UInt64: AsyncStream<Value>.Continuation] = [:]
        var nextContinuationID: UInt64 = 0
        var endWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let registrar = ObservationRegistrar()
    private let state: Mutex<State>

    init(initialValue: Value) {
        state = Mutex(State(value: initialValue))
    }

    deinit {
        let (subscription, continuations, waiters) = state.withLock { state in
            (state.subscription, Array(state.valueContinuations.values), state.endWaiters)
        }
        subscription?.cancel()
        for continuation in continuations { continuation.finish() }
        for waiter in waiters { waiter.resume() }
    }

    var value: Value {
        registrar.access(self, keyPath: \.value)
        return state.withLock { $0.value }
    }

    var loadError: (any Error)? {
        registrar.access(self, keyPath: \.loadError)
        return state.withLock { $0.loadError }
    }

    var isLoading: Bool {
        registrar.access(self, keyPath: \.isLoading)
        return state.withLock { $0.isLoading }
    }

    /// Loads `request` synchronously (so the value is there when the wrapper's initializer
    /// returns), then keeps it fresh. Errors land in ``loadError``.
    func startSynchronously<Request: FetchKeyRequest>(_ request: Request, in database: any DatabaseWriter) where Request.Value == Value {
        let generation = beginLoad()
        let commitTag = database.changeHub.commitCount
        var seed: FetchSeed<Value>?
        do {
            let (value, region) = try database.read { db in try db.recordingReadRegion { try request.fetch(db) } }
            seed = FetchSeed(value: value, region: region, commitTag: commitTag)
            apply(.success(value), generation: generation, commitTag: commitTag)
        } catch {
            apply(.failure(error), generation: generation, commitTag: commitTag)
        }
        subscribe(request, in: database, generation: generation, seed: seed)
    }

    /// Replaces the observed request: loads it once (throwing if that fails), then keeps it
    /// fresh until the returned subscription is cancelled or another load replaces it.
    func load<Request: FetchKeyRequest>(_ request: Request, in database: any DatabaseWriter) async throws -> FetchSubscription
    where Request.Value == Value {
        let generation = beginLoad()
        let commitTag = database.changeHub.commitCount
        let seed: FetchSeed<Value>
        do {
            let (value, region) = try await database.read { db in try db.recordingReadRegion { try request.fetch(db) } }
            seed = FetchSeed(value: value, region: region, commitTag: commitTag)
            apply(.success(value), generation: generation, commitTag: commitTag)
        } catch {
            apply(.failure(error), generation: generation, commitTag: commitTag)
            throw error
        }
        subscribe(request, in: database, generation: generation, seed: seed)
        return FetchSubscription(store: self, generation: generation)
    }

    private func beginLoad() -> UInt64 {
        let (generation, old, waiters) = state.withLock { state in
            state.generation += 1
            state.valueCommitTag = 0
            let old = state.subscription
            state.subscription = nil
            let waiters = state.endWaiters
            state.endWaiters = []
            return (state.generation, old, waiters)
        }
        old?.cancel()
        for waiter in waiters { waiter.resume() }
        registrar.withMutation(of: self, keyPath: \.isLoading) {
            state.withLock { $0.isLoading = true }
        }
        return generation
    }

    /// Joins the shared observation of `request`. The value just loaded seeds it, so a new
    /// observation does not fetch the same value again.
    private func subscribe<Request: FetchKeyRequest>(
        _ request: Request, in database: any DatabaseWriter, generation: UInt64, seed: FetchSeed<Value>?
    ) where Request.Value == Value {
        let token = subscribeShared(to: request, in: database, seed: seed) { [weak self] result, commitTag in
            self?.apply(result, generation: generation, commitTag: commitTag, isObservation: true)
        }
        let stale = state.withLock { state -> Bool in
            guard state.generation == generation else { return true }
            state.subscription = token
            return false
        }
        if stale { token.cancel() }
    }

    /// Applies a result of the current request; results of a replaced request, and observed
    /// results read no later than the current value, are dropped.
    private func apply(_ result: Result<Value, any Error>, generation: UInt64, commitTag: UInt64, isObservation: Bool = false) {
        let isCurrent = state.withLock { state -> Bool in
            guard state.generation == generation else { return false }
            if case .success = result {
                if isObservation, commitTag <= state.valueCommitTag { return false }
                state.valueCommitTag = max(state.valueCommitTag, commitTag)
            }
            return true
        }
        guard isCurrent else { return }
        switch result {
        case .success(let value):
            registrar.withMutation(of: self, keyPath: \.value) {
                state.withLock { $0.value = value }
            }
            if loadErrorIsSet {
                registrar.withMutation(of: self, keyPath: \.loadError) {
                    state.withLock { $0.loadError = nil }
                }
            }
            let continuations = state.withLock { Array($0.valueContinuations.values) }
            for continuation in continuations { continuation.yield(value) }
        case .failure(let error):
            registrar.withMutation(of: self, keyPath: \.loadError) {
                state.withLock { $0.loadError = error }
            }
        }
        if state.withLock({ $0.isLoading }) {
            registrar.withMutation(of: self, keyPath: \.isLoading) {
                state.withLock { $0.isLoading = false }
            }
        }
    }

    private var loadErrorIsSet: Bool { state.withLock { $0.loadError != nil } }

    /// The current value, then every new one, until the store goes away.
    var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> UInt64 in
            state.nextContinuationID += 1
            state.valueContinuations[state.nextContinuationID] = continuation
            continuation.yield(state.value)
            return state.nextContinuationID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.valueContinuations.removeValue(forKey: id) }
        }
        return stream
    }

    // MARK: Subscriptions

    func isActive(generation: UInt64) -> Bool {
        state.withLock { $0.generation == generation && $0.subscription != nil }
    }

    func cancel(generation: UInt64) {
        let (subscription, waiters) = state.withLock { state -> (SharedSubscriptionToken?, [CheckedContinuation<Void, Never>]) in
            guard state.generation == generation else { return (nil, []) }
            defer {
                state.subscription = nil
                state.endWaiters = []
            }
            return (state.subscription, state.endWaiters)
        }
        subscription?.cancel()
        for waiter in waiters { waiter.resume() }
    }

    /// Suspends until the subscription of `generation` ends (cancelled or replaced).
    func waitForEnd(generation: UInt64) async {
        await withCheckedContinuation { continuation in
            let endedAlready = state.withLock { state -> Bool in
                guard state.generation == generation, state.subscription != nil else { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if endedAlready { continuation.resume() }
        }
    }
}
