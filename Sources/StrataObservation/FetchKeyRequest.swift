import StrataSQLite

/// A request that reads one value, possibly from several queries, in one transaction.
///
/// Conforming types are `Hashable`: two wrappers with equal requests on the same database
/// share one underlying observation.
///
/// ```swift
/// struct GameDetail: FetchKeyRequest {
///     var gameID: Int64
///     func fetch(_ db: Database) throws -> (game: Game?, players: [Player]) { ... }
/// }
/// @ObservationIgnored @Fetch(GameDetail(gameID: 1), database: db) var detail = (nil, [])
/// ```
public protocol FetchKeyRequest<Value>: Hashable, Sendable {
    /// What the request reads.
    associatedtype Value: Sendable

    /// Reads the value. Runs on a reader inside one transaction, so all its queries see the same
    /// snapshot; every table it reads is observed. It may run concurrently with writes and with
    /// other fetches, so it must not depend on state outside the database.
    func fetch(_ db: Database) throws -> Value
}

/// All rows of a SQL query, decoded as `Element`.
public struct FetchAllRequest<Element: FetchableRecord & Sendable>: FetchKeyRequest {
    /// The query, with `?` placeholders for ``arguments``.
    public var sql: String
    /// The values bound to the query's placeholders, in order.
    public var arguments: [DatabaseValue]

    /// A request for the rows of `sql`, with `arguments` bound to its placeholders.
    public init(sql: String, arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// A request for the rows of a query written with interpolated values
    /// (`"SELECT * FROM players WHERE score > \(minimum)"`): each value becomes a bound argument.
    public init(_ sql: SQL) {
        self.init(sql: sql.text, arguments: sql.arguments.map(\.databaseValue))
    }

    /// Every row of the query, decoded in order.
    public func fetch(_ db: Database) throws -> [Element] {
        try Element.fetchAll(db, sql: sql, arguments: StatementArguments(arguments))
    }
}

/// The first row of a SQL query, decoded as `Element`, or nil.
public struct FetchOneRecordRequest<Element: FetchableRecord & Sendable>: FetchKeyRequest {
    /// The query, with `?` placeholders for ``arguments``.
    public var sql: String
    /// The values bound to the query's placeholders, in order.
    public var arguments: [DatabaseValue]

    /// A request for the first row of `sql`, with `arguments` bound to its placeholders.
    public init(sql: String, arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The first row of the query, decoded, or nil when it returns none.
    public func fetch(_ db: Database) throws -> Element? {
        try Element.fetchOne(db, sql: sql, arguments: StatementArguments(arguments))
    }
}

/// The first column of the first row of a SQL query (an aggregate such as `count(*)`), or a
/// default when there is no row or the value is NULL.
public struct FetchOneValueRequest<Value: DatabaseValueConvertible & Hashable>: FetchKeyRequest {
    /// The query, with `?` placeholders for ``arguments``.
    public var sql: String
    /// The values bound to the query's placeholders, in order.
    public var arguments: [DatabaseValue]
    /// The value when the query returns no row, or NULL.
    public var defaultValue: Value

    /// A request for the first column of the first row of `sql`, or `defaultValue`.
    public init(sql: String, arguments: [DatabaseValue] = [], defaultValue: Value) {
        self.sql = sql
        self.arguments = arguments
        self.defaultValue = defaultValue
    }

    /// The first column of the first row, or ``defaultValue`` when there is no row or the
    /// value is NULL.
    public func fetch(_ db: Database) throws -> Value {
        try Value?.fetchOne(db, sql: sql, arguments: StatementArguments(arguments))?.flatMap { $0 } ?? defaultValue
    }
}
