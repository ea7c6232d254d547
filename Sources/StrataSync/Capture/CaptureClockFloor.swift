import StrataSQLite

/// The engine's clock, kept in the user's file for the other processes that write it.
///
/// The engine's clock moves past every version it receives; a process without an engine only
/// sees the file. Reading this floor when a transaction logs its first change, that process
/// versions its changes after every edit this device had received, even when its own wall
/// clock is behind the sender's.
enum CaptureClockFloor {
    static let tableName = "strata_sync_clock"

    static let createSQL = """
        CREATE TABLE IF NOT EXISTS main.\(tableName) (
            id INTEGER PRIMARY KEY CHECK (id = 0),
            packedTime INTEGER NOT NULL
        )
        """

    static func create(in db: Database) throws {
        try db.execute(sql: createSQL)
    }

    /// Raises the floor to `packedTime` (a `HybridTimestamp.packedTime`); never lowers it, and
    /// writes nothing when it is there already: the user's file is then left out of the
    /// caller's transaction (no fsync of its log).
    static func raise(to packedTime: Int64, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO main.\(tableName) (id, packedTime) VALUES (0, ?)
                ON CONFLICT (id) DO UPDATE SET packedTime = excluded.packedTime WHERE excluded.packedTime > packedTime
                """,
            arguments: [packedTime])
    }
}
