import StrataSQLite

/// The log of local changes waiting to be sent, kept in the user's own database file.
///
/// Why the main file and not the metadatabase: SQLite makes a transaction that spans several
/// WAL databases atomic in each file, not across them, so a crash during a commit could keep
/// the user's row without the note that it must be sent — a write lost to sync forever. A log
/// row written by a trigger in the same file commits or vanishes with the change it describes.
/// The engine drains the log into the metadatabase and deletes what it drained; draining is
/// idempotent (versions only move forward), so a crash between the two steps repeats work
/// and loses nothing.
///
/// The sequence is a plain rowid, not `AUTOINCREMENT`: the `sqlite_sequence` update that
/// keyword adds to every insert was the largest single cost of capture (about 2 µs a row).
/// What `AUTOINCREMENT` guarantees — a number is never handed out twice — matters here,
/// because the metadatabase remembers how far it drained by sequence. SQLite gives a new row
/// "a ROWID that is one larger than the largest ROWID in the table prior to the insert", so
/// the log keeps its last drained entry (``removeEntries(before:)``) and the largest rowid
/// never goes back.
package enum ChangeLog {
    /// The log's table, in the main schema. Tables whose name starts with `strata_sync` are
    /// the engine's.
    package static let tableName = "strata_sync_changes"

    /// What happened to a record.
    package enum Operation: String, Sendable, Hashable {
        /// Inserted or updated: send the row as it is then.
        case save
        /// Deleted.
        case delete
    }

    /// One logged change.
    package struct Entry: Sendable, Hashable {
        /// The order of the changes; the log's own key.
        public var sequence: Int64
        /// The synced table.
        public var tableName: String
        /// The primary key, as text.
        public var primaryKey: String
        /// Whether the record was saved or deleted.
        public var operation: Operation
        /// The columns the change set, or nil for all of them (an insert).
        public var changedColumns: [String]?
        /// The change's hybrid logical clock version.
        public var version: HybridTimestamp
        /// The id of the local transaction that made the change: changes of one transaction
        /// are sent in one atomic batch when they fit.
        public var transaction: Int64
    }

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS main.\(tableName) (
            sequence INTEGER PRIMARY KEY,
            tableName TEXT NOT NULL,
            primaryKey TEXT NOT NULL,
            operation TEXT NOT NULL CHECK (operation IN ('save', 'delete')),
            changedColumns TEXT,
            version INTEGER NOT NULL,
            "transaction" INTEGER NOT NULL
        )
        """

    /// Creates the log table if needed. Call it on the writer, outside read-only connections.
    package static func create(in db: Database) throws {
        try db.execute(sql: createSQL)
    }

    /// The oldest `limit` entries after `sequence`.
    ///
    /// - Parameter node: the device that made the changes: the log stores versions as
    ///   `HybridTimestamp.packedTime`, without the node every entry shares.
    package static func entries(in db: Database, node: String, after sequence: Int64 = 0, limit: Int = .max) throws -> [Entry] {
        try db.fetchAll(
            sql: """
                SELECT sequence, tableName, primaryKey, operation, changedColumns, version, "transaction"
                FROM main.\(tableName) WHERE sequence > ? ORDER BY sequence LIMIT ?
                """,
            arguments: [sequence, limit]
        ) { row in
            let operationText: String = try row[3]
            let packedTime: Int64 = try row[5]
            guard let operation = Operation(rawValue: operationText), packedTime >= 0 else {
                throw ChangeLogError.malformedEntry(sequence: try row[0], operation: operationText, version: String(packedTime))
            }
            let version = HybridTimestamp(packedTime: packedTime, node: node)
            let columns: String? = try row[4]
            return Entry(
                sequence: try row[0], tableName: try row[1], primaryKey: try row[2], operation: operation,
                changedColumns: columns.map { $0.split(separator: "\u{1F}", omittingEmptySubsequences: true).map(String.init) },
                version: version, transaction: try row[6])
        }
    }

    /// Deletes the entries before `sequence`, once they are safely elsewhere. The entry at
    /// `sequence` stays, so the next entry is numbered after it.
    package static func removeEntries(before sequence: Int64, in db: Database) throws {
        try db.execute(sql: "DELETE FROM main.\(tableName) WHERE sequence < ?", arguments: [sequence])
    }

    /// The largest sequence in the log, or 0 when it is empty.
    package static func lastSequence(in db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(sequence), 0) FROM main.\(tableName)") ?? 0
    }

    /// The number of entries waiting.
    package static func count(in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM main.\(tableName)") ?? 0
    }
}

/// The change log holds a row the engine cannot read.
package enum ChangeLogError: Error, Sendable, Hashable, CustomStringConvertible {
    case malformedEntry(sequence: Int64, operation: String, version: String)

    /// Names the entry and its unreadable values.
    package var description: String {
        switch self {
        case .malformedEntry(let sequence, let operation, let version):
            "change log entry \(sequence) is malformed (operation \"\(operation)\", version \"\(version)\")"
        }
    }
}
