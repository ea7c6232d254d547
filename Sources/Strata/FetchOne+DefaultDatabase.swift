import Dependencies
import StrataObservation
import StrataSQLite

extension FetchOne {
    /// Observes the first column of the first row in the default database; `wrappedValue` is
    /// used when there is no row or the value is NULL.
    ///
    /// ```swift
    /// @FetchOne(sql: "SELECT count(*) FROM players") var playerCount = 0
    /// ```
    public init(wrappedValue: Value, sql: String, arguments: [DatabaseValue] = [])
    where Value: DatabaseValueConvertible & Hashable {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, sql: sql, arguments: arguments, database: database)
    }

    /// Observes the first row as a record in the default database, nil when there is none.
    ///
    /// ```swift
    /// @FetchOne(sql: "SELECT * FROM players ORDER BY score DESC LIMIT 1") var leader: Player?
    /// ```
    public init<Record: FetchableRecord & Sendable>(wrappedValue: Value = nil, sql: String, arguments: [DatabaseValue] = [])
    where Value == Record? {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, sql: sql, arguments: arguments, database: database)
    }
}
