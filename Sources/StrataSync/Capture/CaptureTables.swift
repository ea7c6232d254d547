import StrataSQLite

/// The synced tables, kept in the user's file, for the connections that are not the engine's.
///
/// The capture triggers go with their table: a program that does not use Strata can rebuild a
/// synced table (create, copy, drop, rename) or rename a column, and the triggers are gone or
/// name the old column. Every Strata connection that writes the file mends them at its next
/// write (a schema change hook): it reads from here which tables sync.
enum CaptureTables {
    static let tableName = "strata_sync_tables"

    /// Records `names` as the synced tables, replacing what was recorded.
    static func record(_ names: [String], in db: Database) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS main.\(tableName) (name TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID")
        let recorded = Set(try recorded(in: db))
        guard recorded != Set(names) else { return }
        try db.execute(sql: "DELETE FROM main.\(tableName)")
        for name in names {
            try db.execute(sql: "INSERT INTO main.\(tableName) (name) VALUES (?)", arguments: [name])
        }
    }

    /// The synced tables recorded in the file; empty when no engine ever ran on it.
    static func recorded(in db: Database) throws -> [String] {
        guard try db.tableExists(tableName) else { return [] }
        return try String.fetchAll(db, sql: "SELECT name FROM main.\(tableName) ORDER BY name")
    }
}
