import StrataQueries
import StrataSQLite

extension FetchOne {
    /// Observes a single value of a query-builder statement (an aggregate such as
    /// `Player.count()`); `wrappedValue` is used when there is no row or the value is NULL.
    ///
    /// ```swift
    /// @ObservationIgnored @FetchOne(Player.count(), database: database) var playerCount = 0
    /// ```
    public init<Statement: QueryStatement>(wrappedValue: Value, _ statement: Statement, database: any DatabaseWriter)
    where Statement.QueryValue == Value, Value: DatabaseValueConvertible & Hashable {
        self.init(wrappedValue: wrappedValue, statement: statement, database: database) {
            AnyFetchRequest(FetchOneValueRequest(sql: $0, arguments: $1, defaultValue: wrappedValue))
        }
    }

    /// Observes the first row of a query-builder statement as a record, nil when there is none.
    ///
    /// ```swift
    /// @ObservationIgnored @FetchOne(Player.order { $0.score.desc() }.limit(1), database: database) var leader
    /// ```
    public init<Statement: QueryStatement, Record: FetchableRecord & Sendable>(
        wrappedValue: Value = nil, _ statement: Statement, database: any DatabaseWriter
    ) where Statement.QueryValue == Record, Value == Record? {
        self.init(wrappedValue: wrappedValue, statement: statement, database: database) {
            AnyFetchRequest(FetchOneRecordRequest<Record>(sql: $0, arguments: $1))
        }
    }

    /// Observes the statement's value or, when the statement cannot be built, fails with a
    /// `StatementBuildError` in `loadError` (a later `load` replaces it).
    private init(
        wrappedValue: Value, statement: some QueryStatement, database: any DatabaseWriter,
        makeRequest: @escaping @Sendable (String, [DatabaseValue]) -> AnyFetchRequest<Value>
    ) {
        let request =
            switch statement.fetchRequestFragment {
            case .success(let fragment): makeRequest(fragment.sql, fragment.bindings)
            case .failure(let error): AnyFetchRequest<Value>(FailedStatementRequest(error: error))
            }
        self.init(initialValue: wrappedValue, request: request, makeRequest: makeRequest, database: database)
    }

    /// Replaces the query with a statement; returns once its first value is loaded.
    @discardableResult
    public func load<Statement: QueryStatement>(_ statement: Statement) async throws -> FetchSubscription {
        let fragment = try statement.fetchRequestFragment.get()
        return try await load(sql: fragment.sql, arguments: fragment.bindings)
    }
}
