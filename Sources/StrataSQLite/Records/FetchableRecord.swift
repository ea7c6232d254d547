/// A type that can be built from a fetched row.
///
/// `init(row:)` is the fast path: it reads columns by index, in the order the query selects
/// them. Types that are `Decodable` get a Codable-based `init(row:)` for free, which matches
/// coding keys to column names (convenient, but it pays a name lookup per column per row).
public protocol FetchableRecord {
    init(row: Row) throws
}

extension FetchableRecord {
    /// Fetches every row of a query.
    @inlinable
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        try db.fetchAll(sql: sql, arguments: arguments, Self.init(row:))
    }

    /// Fetches every row of a query written with interpolated values.
    public static func fetchAll(_ db: Database, _ sql: SQL) throws -> [Self] {
        try db.fetchAll(sql: sql.text, arguments: sql.statementArguments, Self.init(row:))
    }

    /// Fetches the first row of a query, or nil.
    @inlinable
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        try db.fetchOne(sql: sql, arguments: arguments, Self.init(row:))
    }

    /// Fetches the first row of a query written with interpolated values, or nil.
    public static func fetchOne(_ db: Database, _ sql: SQL) throws -> Self? {
        try db.fetchOne(sql: sql.text, arguments: sql.statementArguments, Self.init(row:))
    }

    /// A lazy cursor over the rows of a query, for results too large to hold in an array.
    /// Use it inside the closure that received `db`.
    public static func fetchCursor(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> RecordCursor<Self> {
        try RecordCursor(statement: db.statementForFetch(sql: sql), arguments: arguments, decode: Self.init(row:))
    }

    /// A lazy cursor over the rows of a query written with interpolated values.
    public static func fetchCursor(_ db: Database, _ sql: SQL) throws -> RecordCursor<Self> {
        try fetchCursor(db, sql: sql.text, arguments: sql.statementArguments)
    }
}

extension DatabaseValueConvertible {
    /// Fetches the first column of every row.
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        try db.fetchAll(sql: sql, arguments: arguments) { try $0.decode(Self.self, at: 0) }
    }

    /// Fetches the first column of every row of an interpolated query.
    public static func fetchAll(_ db: Database, _ sql: SQL) throws -> [Self] {
        try fetchAll(db, sql: sql.text, arguments: sql.statementArguments)
    }

    /// Fetches the first column of the first row, or nil when there is no row.
    ///
    /// A NULL in that column throws for a non-optional type; fetch `Int?.self` to tell "no
    /// row" (nil) from "NULL" (`.some(nil)`).
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        try db.fetchOne(sql: sql, arguments: arguments) { try $0.decode(Self.self, at: 0) }
    }

    /// Fetches the first column of the first row of an interpolated query; nil without a row.
    public static func fetchOne(_ db: Database, _ sql: SQL) throws -> Self? {
        try fetchOne(db, sql: sql.text, arguments: sql.statementArguments)
    }

    /// A lazy cursor over the first column of every row.
    public static func fetchCursor(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> RecordCursor<Self> {
        try RecordCursor(statement: db.statementForFetch(sql: sql), arguments: arguments) { try $0.decode(Self.self, at: 0) }
    }
}

extension Database {
    /// Runs a query and decodes every row with `decode`.
    // Inlinable (with the record methods that call it) so that the loop is specialized for the
    // record type in the caller's module: no generic array appends, no metadata lookups per row.
    @inlinable
    public func fetchAll<Element>(sql: String, arguments: StatementArguments = [], _ decode: (Row) throws -> Element) throws -> [Element] {
        let statement = try statementForFetch(sql: sql)
        return try statement.withExecution(arguments: arguments) { statement in
            var elements: [Element] = []
            let row = Row(statement: statement)
            while try statement.step(arguments: arguments) {
                elements.append(try decode(row))
            }
            return elements
        }
    }

    /// Runs a query and decodes its first row with `decode`, or returns nil when there is none.
    @inlinable
    public func fetchOne<Element>(sql: String, arguments: StatementArguments = [], _ decode: (Row) throws -> Element) throws -> Element? {
        let statement = try statementForFetch(sql: sql)
        return try statement.withExecution(arguments: arguments) { statement in
            guard try statement.step(arguments: arguments) else { return nil }
            return try decode(Row(statement: statement))
        }
    }

    /// The number of rows a query returns, counted by SQLite (`SELECT COUNT(*) FROM (query)`).
    public func fetchCount(sql: String, arguments: StatementArguments = []) throws -> Int {
        try Int.fetchOne(self, sql: "SELECT COUNT(*) FROM (\(sql))", arguments: arguments) ?? 0
    }

    /// The number of rows a query written with interpolated values returns.
    public func fetchCount(_ sql: SQL) throws -> Int {
        try fetchCount(sql: sql.text, arguments: sql.statementArguments)
    }
}
