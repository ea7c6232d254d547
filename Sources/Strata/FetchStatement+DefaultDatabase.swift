import Dependencies
import StrataObservation
import StrataQueries
import StrataSQLite

extension FetchAll {
    /// Observes the rows of a query-builder statement in the default database.
    ///
    /// ```swift
    /// @ObservationIgnored @FetchAll(Game.order(by: \.title)) var games
    /// ```
    public init<Statement: QueryStatement>(wrappedValue: [Element] = [], _ statement: Statement)
    where Statement.QueryValue == Element {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, statement, database: database)
    }
}

extension FetchOne {
    /// Observes a single value of a statement in the default database; `wrappedValue` is used
    /// when there is no row or the value is NULL.
    ///
    /// ```swift
    /// @ObservationIgnored @FetchOne(Player.count()) var playerCount = 0
    /// ```
    public init<Statement: QueryStatement>(wrappedValue: Value, _ statement: Statement)
    where Statement.QueryValue == Value, Value: DatabaseValueConvertible & Hashable {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, statement, database: database)
    }

    /// Observes the first row of a statement as a record in the default database.
    public init<Statement: QueryStatement, Record: FetchableRecord & Sendable>(wrappedValue: Value = nil, _ statement: Statement)
    where Statement.QueryValue == Record, Value == Record? {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, statement, database: database)
    }
}
