import StrataSQLite

/// All rows of a query, kept fresh: re-fetched after every commit that changes a table the
/// query reads.
///
/// ```swift
/// @Observable final class PlayersModel {
///     @ObservationIgnored
///     @FetchAll(sql: "SELECT * FROM players ORDER BY score DESC", database: database) var players: [Player]
/// }
/// ```
///
/// The value is loaded synchronously when the wrapper is created, then observed. Errors do not
/// end the observation: they land in `$players.loadError`, and the next relevant commit
/// retries. Wrappers with the same SQL, arguments and database share one observation.
@propertyWrapper
public struct FetchAll<Element: FetchableRecord & Sendable>: Sendable {
    let store: FetchStore<[Element]>
    let database: any DatabaseWriter

    /// The current value: the last one loaded, or the initial value until a load succeeds.
    /// Reading it is cheap (no query) and safe from any thread; inside
    /// `withObservationTracking` it is tracked, so the next value triggers the change handler.
    public var wrappedValue: [Element] { store.value }

    /// The wrapper itself (`$players`), for ``loadError``, ``isLoading``, ``values`` and
    /// `load(_:)`.
    public var projectedValue: FetchAll<Element> { self }

    /// Observes the rows of a SQL query.
    ///
    /// The rows are loaded synchronously, on a reader, before the initializer returns; if that
    /// load fails, `wrappedValue` stays and the error is in ``loadError``.
    ///
    /// ```swift
    /// @FetchAll(sql: "SELECT * FROM players WHERE score > ?", arguments: [10], database: pool) var players: [Player]
    /// ```
    public init(wrappedValue: [Element] = [], sql: String, arguments: [DatabaseValue] = [], database: any DatabaseWriter) {
        self.init(wrappedValue: wrappedValue, request: FetchAllRequest(sql: sql, arguments: arguments), database: database)
    }

    /// Observes the rows of a SQL query written with interpolated values.
    public init(wrappedValue: [Element] = [], _ sql: SQL, database: any DatabaseWriter) {
        self.init(wrappedValue: wrappedValue, request: FetchAllRequest(sql), database: database)
    }

    init<Request: FetchKeyRequest>(wrappedValue: [Element], request: Request, database: any DatabaseWriter)
    where Request.Value == [Element] {
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

    /// Replaces the query; returns once its first value is loaded, and throws if that load
    /// fails. The returned ``FetchSubscription`` ends the new observation when cancelled.
    @discardableResult
    public func load(_ sql: SQL) async throws -> FetchSubscription {
        try await store.load(FetchAllRequest<Element>(sql), in: database)
    }

    /// Replaces the query; returns once its first value is loaded.
    @discardableResult
    public func load(sql: String, arguments: [DatabaseValue] = []) async throws -> FetchSubscription {
        try await store.load(FetchAllRequest<Element>(sql: sql, arguments: arguments), in: database)
    }

    /// The current value, then each new one, for command-line and server code. The stream
    /// keeps only the newest value for a slow consumer, and ends when the wrapper's storage is
    /// released.
    public var values: AsyncStream<[Element]> { store.values }
}

extension FetchAll where Element: TableRecord {
    /// Observes every row of the element's table.
    public init(wrappedValue: [Element] = [], database: any DatabaseWriter) {
        self.init(wrappedValue: wrappedValue, sql: Element.selectAllSQL, database: database)
    }
}
