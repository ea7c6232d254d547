import StrataSQLite

/// The value of a ``FetchKeyRequest``, kept fresh: several queries read in one transaction
/// under one observation.
///
/// ```swift
/// struct Scoreboard: FetchKeyRequest {
///     func fetch(_ db: Database) throws -> (games: [Game], playerCount: Int) { ... }
/// }
/// @ObservationIgnored @Fetch(Scoreboard(), database: database) var scoreboard = ([], 0)
/// ```
@propertyWrapper
public struct Fetch<Value: Sendable>: Sendable {
    let store: FetchStore<Value>
    let database: any DatabaseWriter

    /// The current value: the last one loaded, or the initial value until a load succeeds.
    /// Reading it is cheap (no query) and safe from any thread; inside
    /// `withObservationTracking` it is tracked, so the next value triggers the change handler.
    public var wrappedValue: Value { store.value }

    /// The wrapper itself (`$scoreboard`), for ``loadError``, ``isLoading``, ``values`` and
    /// ``load(_:)``.
    public var projectedValue: Fetch<Value> { self }

    /// Observes the value of `request`, loaded synchronously (on a reader) before the
    /// initializer returns; if that load fails, `wrappedValue` stays and the error is in
    /// ``loadError``. Wrappers with equal requests on the same database share one observation.
    public init<Request: FetchKeyRequest>(wrappedValue: Value, _ request: Request, database: any DatabaseWriter)
    where Request.Value == Value {
        store = FetchStore(initialValue: wrappedValue)
        self.database = database
        store.startSynchronously(request, in: database)
    }

    /// The error of the last load or re-fetch, nil once one succeeds again. An error does not
    /// end the observation: the next commit to a table the query reads retries.
    public var loadError: (any Error)? { store.loadError }

    /// Whether a load started by the initializer or by `load(_:)` has not delivered its first
    /// value (or error) yet.
    public var isLoading: Bool { store.isLoading }

    /// Replaces the request; returns once its first value is loaded, and throws if that load
    /// fails. The returned ``FetchSubscription`` ends the new observation when cancelled.
    @discardableResult
    public func load<Request: FetchKeyRequest>(_ request: Request) async throws -> FetchSubscription where Request.Value == Value {
        try await store.load(request, in: database)
    }

    /// The current value, then each new one, for command-line and server code. The stream
    /// keeps only the newest value for a slow consumer, and ends when the wrapper's storage is
    /// released.
    public var values: AsyncStream<Value> { store.values }
}
