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
    associatedtype Value: Sendable
    func fetch(_ db: Database) throws -> Value
}

/// All rows of a SQL query, decoded as `Element`.
public struct FetchAllRequest<Element: FetchableRecord & Sendable>: FetchKeyRequest {
    public var sql: String
    public var arguments: [DatabaseValue]

    public init(sql: String, arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    public init(_ sql: SQL) {
        self.init(sql: sql.text, arguments: sql.arguments.map(\.databaseValue))
    }

    public func fetch(_ db: Database) throws -> [Element] {
        try Element.fetchAll(db, sql: sql, arguments: StatementArguments(arguments))
    }
}

/// The first row of a SQL query, decoded as `Element`, or nil.
public struct FetchOneRecordRequest<Element: FetchableRecord & Sendable>: FetchKeyRequest {
    public var sql: String
    public var arguments: [DatabaseValue]

    public init(sql: String, arguments: [DatabaseValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    public func fetch(_ db: Database) throws -> Element? {
        try Element.fetchOne(db, sql: sql, arguments: StatementArguments(arguments))
    }
}

/// The first column of the first row of a SQL query (an aggregate such as `count(*)`), or a
/// default when there is no row or the value is NULL.
public struct FetchOneValueRequest<Value: DatabaseValueConvertible & Hashable>: FetchKeyRequest {
    public var sql: String
    public var arguments: [DatabaseValue]
    public var defaultValue: Value

    public init(sql: String, arguments: [DatabaseValue] = [], defaultValue: Value) {
        self.sql = sql
        self.arguments = arguments
        self.defaultValue = defaultValue
    }

    public func fetch(_ db: Database) throws -> Value {
        try Value?.fetchOne(db, sql: sql, arguments: StatementArguments(arguments))?.flatMap { $0 } ?? defaultValue
    }
}
