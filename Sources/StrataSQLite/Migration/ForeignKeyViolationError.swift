/// A row references a parent row that does not exist (`PRAGMA foreign_key_check`).
public struct ForeignKeyViolationError: Error, Sendable, CustomStringConvertible {
    /// The table holding the dangling reference.
    public var tableName: String
    /// The rowid of the row holding it (nil for a `WITHOUT ROWID` table).
    public var rowID: Int64?
    /// The table the reference points to.
    public var parentTableName: String

    /// The violation, naming both tables and the row.
    public var description: String {
        "foreign key violation: row \(rowID.map(String.init) ?? "(without rowid)") of \"\(tableName)\" references a missing row of \"\(parentTableName)\""
    }

    static func first(in db: Database) throws -> ForeignKeyViolationError? {
        try db.fetchOne(sql: "PRAGMA foreign_key_check") { row in
            ForeignKeyViolationError(tableName: try row[0], rowID: try row[1], parentTableName: try row[2])
        }
    }
}
