import Foundation
import StrataSQLite

/// What the user's own file says about its sync metadatabase: a random identity, also kept in
/// the metadatabase, and the cloud container the metadatabase belongs to.
///
/// Both live in the user's file because the metadatabase is a separate file that can outlive
/// or miss what it describes: the migrator's `eraseDatabaseOnSchemaChange` drops every table
/// of the user's file (this one with them), a backup restores one file and not the other, an
/// app deletes its database but not the sibling. An identity missing from the user's file, or
/// different from the metadatabase's, means the metadatabase describes rows that are no
/// longer there; it is reset (``MetadatabaseTable/forgetFile(in:)``) so the next sync fetches
/// everything again and sends every local row, instead of believing rows are synced that are
/// gone.
///
/// The table's name starts with `Database.reservedNamePrefix`: the migrator's
/// schema comparison ignores it.
enum SyncedFileIdentity {
    static let tableName = "strata_sync_file"

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS main.\(tableName) (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL
        ) WITHOUT ROWID
        """

    static let fileIDKey = "file.id"
    static let containerIdentifierKey = "container.identifier"

    /// A value of the user's file, or nil (also when the table does not exist).
    static func value(_ key: String, in db: Database) throws -> String? {
        guard try db.tableExists(tableName) else { return nil }
        return try String.fetchOne(db, sql: "SELECT value FROM main.\(tableName) WHERE key = ?", arguments: [key])
    }

    static func set(_ key: String, to value: String, in db: Database) throws {
        try db.execute(sql: createSQL)
        try db.execute(sql: "INSERT OR REPLACE INTO main.\(tableName) (key, value) VALUES (?, ?)", arguments: [key, value])
    }

    /// Makes the metadatabase attached to the writer `db` describe its file: resets it when the
    /// identities differ, then records one identity in both, and the container in the user's
    /// file. Runs outside a transaction: the metadatabase is reset before the identity is
    /// written, so a crash in between resets it again on the next launch.
    ///
    /// - Returns: whether the metadatabase was reset.
    @discardableResult
    static func reconcile(in db: Database, containerIdentifier: String) throws -> Bool {
        let fileID = try value(fileIDKey, in: db)
        let describedID = try EngineState.value(EngineState.fileID, in: db)
        var reset = false
        if let describedID, describedID != fileID {
            try db.inTransaction {
                try MetadatabaseTable.forgetFile(in: db); return .commit
            }
            reset = true
        }
        let identity = fileID ?? UUID().uuidString.lowercased()
        if fileID == nil { try set(fileIDKey, to: identity, in: db) }
        if try EngineState.value(EngineState.fileID, in: db) != identity {
            try EngineState.set(EngineState.fileID, to: identity, in: db)
        }
        if try value(containerIdentifierKey, in: db) != containerIdentifier {
            try set(containerIdentifierKey, to: containerIdentifier, in: db)
        }
        return reset
    }
}
