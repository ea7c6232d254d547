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
        self.init(wrappedValue: wrappedValue, request: FetchAllRequest(statement), database: database)
    }

    /// Replaces the query with a statement; returns once its first value is loaded.
    @discardableResult
    public func load<Statement: QueryStatement>(_ statement: Statement) async throws -> FetchSubscription
    where Statement.QueryValue == Element {
        try await store.load(FetchAllRequest<Element>(statement), in: database)
    }
}

extension FetchAllRequest {
    /// The rows of a query-builder statement.
    public init<Statement: QueryStatement>(_ statement: Statement) where Statement.QueryValue == Element {
        let fragment = statement.statementFragment
        self.init(sql: fragment.sql, arguments: fragment.bindings)
    }
}
