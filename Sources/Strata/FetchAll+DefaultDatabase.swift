import Dependencies
import StrataObservation
import StrataSQLite

// The initializers SQLiteData's users write: no `database:` argument, the query runs against
// `@Dependency(\.defaultDatabase)` as it is when the wrapper is created.

extension FetchAll {
    /// Observes the rows of a SQL query in the default database.
    ///
    /// ```swift
    /// @FetchAll(sql: "SELECT * FROM players ORDER BY score DESC") var players: [Player]
    /// ```
    public init(wrappedValue: [Element] = [], sql: String, arguments: [DatabaseValue] = []) {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, sql: sql, arguments: arguments, database: database)
    }

    /// Observes the rows of a SQL query written with interpolated values, in the default database.
    public init(wrappedValue: [Element] = [], _ sql: SQL) {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, sql, database: database)
    }
}

extension FetchAll where Element: TableRecord {
    /// Observes every row of the element's table in the default database.
    ///
    /// ```swift
    /// @FetchAll var games: [Game] = []
    /// ```
    ///
    /// Write the `= []`: Swift only default-initializes a wrapped property without an initial
    /// value through an `init()` declared in the wrapper's own module, and this one cannot be
    /// there, since StrataObservation knows nothing of dependencies.
    public init(wrappedValue: [Element] = []) {
        @Dependency(\.defaultDatabase) var database
        self.init(wrappedValue: wrappedValue, database: database)
    }
}
