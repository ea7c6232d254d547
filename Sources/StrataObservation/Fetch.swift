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

    public var wrappedValue: Value { store.value }

    public var projectedValue: Fetch<Value> { self }

    public init<Request: FetchKeyRequest>(wrappedValue: Value, _ request: Request, database: any DatabaseWriter) where Request.Value == Value {
        store = FetchStore(initialValue: wrappedValue)
        self.database = database
        store.startSynchronously(request, in: database)
    }

    public var loadError: (any Error)? { store.loadError }
    public var isLoading: Bool { store.isLoading }

    /// Replaces the request; returns once its first value is loaded.
    @discardableResult
    public func load<Request: FetchKeyRequest>(_ request: Request) async throws -> FetchSubscription where Request.Value == Value {
        try await store.load(request, in: database)
    }

    public var values: AsyncStream<Value> { store.values }
}
