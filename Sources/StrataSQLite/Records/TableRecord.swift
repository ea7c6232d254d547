import CSQLite

/// A record stored in one table: what `@Table` generates, and what you can write by hand.
///
/// ```swift
/// struct Player: TableRecord {
///     static let tableName = "players"
///     static let columnNames = ["id", "gameID", "name", "score"]
///     var id: Int64
///     var gameID: Int64
///     var name: String
///     var score: Int
///
///     init(row: Row) throws {
///         id = try row[0]; gameID = try row[1]; name = try row[2]; score = try row[3]
///     }
///     func encodeColumns(to columns: inout ColumnEncoder) {
///         columns.append(id); columns.append(gameID); columns.append(name); columns.append(score)
///     }
/// }
///
/// try player.insert(db)
/// try Player.find(db, id: 1)
/// ```
///
/// `init(row:)` reads and `encodeColumns(to:)` writes the columns in ``columnNames`` order;
/// every statement Strata generates selects and binds them in that order, by index.
public protocol TableRecord: FetchableRecord {
    /// The table's name, unquoted.
    static var tableName: String { get }
    /// The schema the table lives in, unquoted: the name an attached database was given
    /// (`db.attach(path:as:)`), `"temp"`, or nil (the default) for SQLite's usual lookup
    /// (temp, then main, then attached databases in order).
    ///
    /// Every statement Strata writes for the table names it as `"schema"."table"`.
    static var schemaName: String? { get }
    /// The columns that are written, in declaration order.
    static var columnNames: [String] { get }
    /// Generated columns (`GENERATED ALWAYS AS …`): selected after ``columnNames`` and read by
    /// `init(row:)`, never written. Empty by default.
    static var generatedColumnNames: [String] { get }
    /// The primary key's columns; `["id"]` by default.
    static var primaryKeyColumnNames: [String] { get }
    /// Appends every column's value in ``columnNames`` order.
    func encodeColumns(to columns: inout ColumnEncoder) throws
}

extension TableRecord {
    /// `["id"]`.
    public static var primaryKeyColumnNames: [String] { ["id"] }
    /// nil: SQLite's usual lookup.
    public static var schemaName: String? { nil }
    /// None.
    public static var generatedColumnNames: [String] { [] }

    /// Every column a `SELECT` of the record reads, in the order `init(row:)` decodes them:
    /// ``columnNames`` then ``generatedColumnNames``.
    public static var selectedColumnNames: [String] { columnNames + generatedColumnNames }
}

/// What `INSERT` does when the row conflicts with a UNIQUE or PRIMARY KEY constraint.
public enum ConflictResolution: String, Sendable {
    case abort = "ABORT"
    case fail = "FAIL"
    case ignore = "IGNORE"
    case replace = "REPLACE"
    case rollback = "ROLLBACK"
}

// MARK: - Writing

extension TableRecord {
    /// Inserts the record. With a conflict resolution, `INSERT OR …`.
    public func insert(_ db: Database, onConflict resolution: ConflictResolution? = nil) throws {
        let kind: RecordStatementKind = resolution.map { .insertOr($0) } ?? .insert
        try db.executeRecordStatement(kind, for: Self.self, encoding: self)
    }

    /// Inserts the record and returns it as stored (`RETURNING`), with the values SQLite
    /// assigned: an autoincremented key, column defaults, generated columns.
    public func inserted(_ db: Database) throws -> Self {
        let statement = try db.recordStatement(.insertReturning, for: Self.self)
        return try db.runRecordStatement(statement, encoding: self) { statement in
            guard try statement.step(arguments: []) else {
                throw DatabaseError(resultCode: .error, message: "INSERT … RETURNING returned no row", sql: statement.sql)
            }
            return try Self(row: Row(statement: statement))
        }
    }

    /// Inserts the record, or updates every non-key column of the row with the same primary key
    /// (`INSERT … ON CONFLICT (key) DO UPDATE`).
    public func upsert(_ db: Database) throws {
        try db.executeRecordStatement(.upsert, for: Self.self, encoding: self)
    }

    /// Updates the row with the record's primary key. Throws ``RecordNotFoundError`` when no
    /// such row exists.
    public func update(_ db: Database) throws {
        try db.executeRecordStatement(.update, for: Self.self, encoding: self)
        if db.changesCount == 0 {
            throw RecordNotFoundError(tableName: Self.tableName, key: try primaryKeyValues(db))
        }
    }

    /// Deletes the row with the record's primary key. Returns whether a row was deleted.
    @discardableResult
    public func delete(_ db: Database) throws -> Bool {
        try db.executeRecordStatement(.delete, for: Self.self, encoding: self)
        return db.changesCount > 0
    }

    /// Whether a row with the record's primary key exists.
    public func exists(_ db: Database) throws -> Bool {
        let statement = try db.recordStatement(.exists, for: Self.self)
        return try db.runRecordStatement(statement, encoding: self) { try $0.step(arguments: []) }
    }

    private func primaryKeyValues(_ db: Database) throws -> [DatabaseValue] {
        let layout = try RecordLayout(Self.self)
        var values: [DatabaseValue] = []
        let statement = try db.makeStatement(sql: "SELECT " + layout.primaryKeyPositions.map { "?\($0 + 1)" }.joined(separator: ", "))
        return try db.runRecordStatement(statement, encoding: self) { statement in
            guard try statement.step(arguments: []) else { return [] }
            let row = Row(statement: statement)
            for index in 0..<row.count { values.append(row.value(at: index)) }
            return values
        }
    }
}

// MARK: - Reading

extension TableRecord {
    /// Every row of the table.
    @inlinable
    public static func fetchAll(_ db: Database) throws -> [Self] {
        let statement = try db.recordStatement(.selectAll, for: Self.self)
        return try db.fetchAll(sql: statement.sql, arguments: [], Self.init(row:))
    }

    /// A lazy cursor over every row of the table.
    public static func fetchCursor(_ db: Database) throws -> RecordCursor<Self> {
        let statement = try db.recordStatement(.selectAll, for: Self.self)
        return try fetchCursor(db, sql: statement.sql)
    }

    /// The number of rows in the table.
    public static func fetchCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \(quotedTableName)") ?? 0
    }

    /// The row with this primary key, or nil.
    @inlinable
    public static func fetchOne(_ db: Database, id: some DatabaseValueConvertible) throws -> Self? {
        let statement = try db.recordStatement(.selectByKey, for: Self.self)
        // A single-column key binds the value directly (no key array); a composite key takes
        // the general path, which reports the count mismatch.
        guard sqlite3_bind_parameter_count(statement.handle) == 1 else {
            return try fetchOne(db, key: [id])
        }
        return try statement.withExecution(binding: id) { statement in
            guard try statement.step(arguments: [id]) else { return nil }
            return try Self(row: Row(statement: statement))
        }
    }

    /// The row with this (possibly composite) primary key, or nil. Values follow
    /// ``primaryKeyColumnNames``.
    @inlinable
    public static func fetchOne(_ db: Database, key: [any DatabaseValueConvertible]) throws -> Self? {
        let statement = try db.recordStatement(.selectByKey, for: Self.self)
        guard key.count == primaryKeyColumnNames.count else {
            throw DatabaseError(
                resultCode: .misuse,
                message: "\(tableName) has a primary key of \(primaryKeyColumnNames.count) column(s), \(key.count) value(s) given",
                sql: statement.sql)
        }
        // The record statement itself (never busy: recordStatement makes a fresh one when it
        // is), not a second lookup of its SQL text in the statement cache, which would hash
        // the whole SQL on every call.
        let arguments = StatementArguments(key)
        return try statement.withExecution(arguments: arguments) { statement in
            guard try statement.step(arguments: arguments) else { return nil }
            return try Self(row: Row(statement: statement))
        }
    }

    /// The row with this primary key. Throws ``RecordNotFoundError`` when there is none.
    public static func find(_ db: Database, id: some DatabaseValueConvertible) throws -> Self {
        guard let record = try fetchOne(db, id: id) else {
            throw RecordNotFoundError(tableName: tableName, key: [id.databaseValue])
        }
        return record
    }

    /// Deletes the row with this primary key. Returns whether a row was deleted.
    @discardableResult
    public static func deleteOne(_ db: Database, id: some DatabaseValueConvertible) throws -> Bool {
        let statement = try db.recordStatement(.deleteByKey, for: Self.self)
        // As `statement.execute(arguments: [id])`, binding a single-column key directly.
        try statement.withExecution(binding: id) { statement in
            while try statement.step(arguments: [id]) {}
        }
        return db.changesCount > 0
    }

    /// Deletes every row of the table. Returns the number of rows deleted.
    @discardableResult
    public static func deleteAll(_ db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM \(quotedTableName)")
        return db.changesCount
    }
}
