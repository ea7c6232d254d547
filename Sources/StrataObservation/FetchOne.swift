import StrataSQLite

/// One value, kept fresh: an aggregate (`SELECT count(*) FROM players`) with a default, or
/// the first row of a query as an optional record.
///
/// ```swift
/// @ObservationIgnored @FetchOne(sql: "SELECT count(*) FROM players", database: database) var playerCount = 0
/// @ObservationIgnored @FetchOne(sql: "SELECT * FROM players ORDER BY score DESC LIMIT 1", database: database) var leader: Player?
/// ```
@propertyWrapper
public struct FetchOne<Value: Sendable>: Sendable {
    let store: FetchStore<Value>
    let database: any DatabaseWriter
    private let makeRequest: @Sendable (String, [DatabaseValue]) -> AnyFetchRequest<Value>

    /// The current value: the last one loaded, or the initial value until a load succeeds.
    /// Reading it is cheap (no query) and safe from any thread; inside
    /// `withObservationTracking` it is tracked, so the next value triggers the change handler.
    public var wrappedValue: Value { store.value }

    /// The wrapper itself (`$playerCount`), for ``loadError``, ``isLoading``, ``values`` and
    /// `load(_:)`.
    public var projectedValue: FetchOne<Value> { self }

    /// Observes the first column of the first row; `wrappedValue` is used when there is no row
    /// or the value is NULL.
    public init(wrappedValue: Value, sql: String, arguments: [DatabaseValue] = [], database: any DatabaseWriter)
    where Value: DatabaseValueConvertible & Hashable {
        let makeRequest: @Sendable (String, [DatabaseValue]) -> AnyFetchRequest<Value> = { sql, arguments in
            AnyFetchRequest(FetchOneValueRequest(sql: sql, arguments: arguments, defaultValue: wrappedValue))
        }
        self.init(initialValue: wrappedValue, request: makeRequest(sql, arguments), makeRequest: makeRequest, database: database)
    }

    /// Observes the first row as a record, nil when there is none.
    public init<Record: FetchableRecord & Sendable>(
        wrappedValue: Value = nil, sql: String, arguments: [DatabaseValue] = [], database: any DatabaseWriter
    )
    where Value == Record? {
        let makeRequest: @Sendable (String, [DatabaseValue]) -> AnyFetchRequest<Value> = { sql, arguments in
            AnyFetchRequest(FetchOneRecordRequest<Record>(sql: sql, arguments: arguments))
        }
        self.init(initialValue: wrappedValue, request: makeRequest(sql, arguments), makeRequest: makeRequest, database: database)
    }

    init(
        initialValue: Value, request: AnyFetchRequest<Value>,
        makeRequest: @escaping @Sendable (String, [DatabaseValue]) -> AnyFetchRequest<Value>, database: any DatabaseWriter
    ) {
        store = FetchStore(initialValue: initialValue)
        self.database = database
        self.makeRequest = makeRequest
        store.startSynchronously(request, in: database)
    }

    /// The error of the last load or re-fetch, nil once one succeeds again. An error does not
    /// end the observation: the next commit to a table the query reads retries.
    public var loadError: (any Error)? { store.loadError }

    /// Whether a load started by the initializer or by `load(_:)` has not delivered its first
    /// value (or error) yet.
    public var isLoading: Bool { store.isLoading }

    /// Replaces the query; returns once its first value is loaded, and throws if that load
    /// fails. The returned ``FetchSubscription`` ends the new observation when cancelled.
    @discardableResult
    public func load(_ sql: SQL) async throws -> FetchSubscription {
        try await store.load(makeRequest(sql.text, sql.arguments.map(\.databaseValue)), in: database)
    }

    /// Replaces the query; returns once its first value is loaded.
    @discardableResult
    public func load(sql: String, arguments: [DatabaseValue] = []) async throws -> FetchSubscription {
        try await store.load(makeRequest(sql, arguments), in: database)
    }

    /// The current value, then each new one, for command-line and server code. The stream
    /// keeps only the newest value for a slow consumer, and ends when the wrapper's storage is
    /// released.
    public var values: AsyncStream<Value> { store.values }
}

/// A type-erased request, so `FetchOne` can hold either kind of request for one `Value`.
struct AnyFetchRequest<Value: Sendable>: FetchKeyRequest {
    let base: AnyHashableSendable
    let fetchValue: @Sendable (Database) throws -> Value

    init<Request: FetchKeyRequest>(_ request: Request) where Request.Value == Value {
        base = AnyHashableSendable(request)
        fetchValue = { try request.fetch($0) }
    }

    func fetch(_ db: Database) throws -> Value { try fetchValue(db) }

    static func == (lhs: Self, rhs: Self) -> Bool { lhs.base == rhs.base }
    func hash(into hasher: inout Hasher) { hasher.combine(base) }
}
