import StrataQueries
import StrataSQLite

extension FetchAll {
    /// Observes the rows of a query-builder statement.
    ///
    /// ```swift
    /// @ObservationIgnored @FetchAll(Game.order(by: \.title), database: database) var games
    /// ```
    public init<Statement: QueryStatement>(wrappedValue: [Element] = [], _ statement: Statement, database: any DatabaseWriter)
    where Statement.QueryValue == Element {
        switch statement.fetchRequestFragment {
        case .success(let fragment):
            self.init(
                wrappedValue: wrappedValue, request: FetchAllRequest(sql: fragment.sql, arguments: fragment.bindings), database: database)
        case .failure(let error):
            self.init(wrappedValue: wrappedValue, request: FailedStatementRequest(error: error), database: database)
        }
    }

    /// Replaces the query with a statement; returns once its first value is loaded.
    @discardableResult
    public func load<Statement: QueryStatement>(_ statement: Statement) async throws -> FetchSubscription
    where Statement.QueryValue == Element {
        try await store.load(FetchAllRequest<Element>(statement), in: database)
    }
}

extension FetchAllRequest {
    /// The rows of a query-builder statement. Throws a `StatementBuildError`
    /// when the statement cannot be built (a write whose record failed to encode, …).
    public init<Statement: QueryStatement>(_ statement: Statement) throws where Statement.QueryValue == Element {
        let fragment = try statement.fetchRequestFragment.get()
        self.init(sql: fragment.sql, arguments: fragment.bindings)
    }
}
