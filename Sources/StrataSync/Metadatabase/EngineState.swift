import StrataSQLite

/// The engine's key-value state in the metadatabase: change tokens, the device id, the clock's
/// last timestamp, how far the change log was drained.
///
/// Each key belongs to one scope (see ``MetadatabaseTable/Scope``): the device's (its id and
/// clock), the file's (the change log's position, the file's identity) or the account's
/// (tokens, created zones, the signed-in user). Resets use ``forgetAccountKeys(in:)`` and
/// ``forgetFileKeys(in:)``; a new key names its scope by its prefix.
enum EngineState {
    static func value(_ key: String, in db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM \(MetadatabaseTable.state.qualifiedName) WHERE key = ?", arguments: [key])
    }

    static func set(_ key: String, to value: String?, in db: Database) throws {
        if let value {
            // An unchanged value writes nothing: a transaction that changes no page commits
            // without touching the file, where a rewrite costs an fsync (every fetch saves its
            // tokens, most of them unchanged).
            try db.execute(
                sql: """
                    INSERT INTO \(MetadatabaseTable.state.qualifiedName) (key, value) VALUES (?, ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value WHERE value IS NOT excluded.value
                    """,
                arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM \(MetadatabaseTable.state.qualifiedName) WHERE key = ?", arguments: [key])
        }
    }

    // The device's.
    static let deviceID = "deviceID"
    static let lastTimestamp = "clock.lastTimestamp"
    /// The container whose metadatabase this is (``Metadatabase/attach(to:containerIdentifier:)``).
    static let containerIdentifier = "container.identifier"

    // The file's.
    static let drainedThrough = "changeLog.drainedThrough"
    /// The identity of the user's file this metadatabase describes (``SyncedFileIdentity``).
    static let fileID = "file.id"

    // The account's.
    static let userName = "account.userName"
    static func databaseToken(_ scope: CloudDatabaseScope) -> String { "token.database.\(scope.rawValue)" }
    static func zoneToken(_ zone: CloudZoneID) -> String { "token.zone.\(zone.owner).\(zone.name)" }
    static func zoneCreated(_ zone: CloudZoneID) -> String { "zone.created.\(zone.owner).\(zone.name)" }
    /// Set by a resync until the database's next full fetch: zones listed as deleted then
    /// are not taken as deletions (the cloud lost them; the resync sends their rows again).
    static func resyncing(_ scope: CloudDatabaseScope) -> String { "resync.\(scope.rawValue)" }

    /// Deletes the keys of the signed-in account: change tokens, zones known to exist, the user.
    static func forgetAccountKeys(in db: Database) throws {
        try db.execute(
            sql:
                "DELETE FROM \(MetadatabaseTable.state.qualifiedName) WHERE key LIKE 'token.%' OR key LIKE 'zone.%' OR key LIKE 'resync.%' OR key = ?",
            arguments: [userName])
    }

    /// Deletes the keys that describe the user's file.
    static func forgetFileKeys(in db: Database) throws {
        try db.execute(
            sql: "DELETE FROM \(MetadatabaseTable.state.qualifiedName) WHERE key IN (?, ?)", arguments: [drainedThrough, fileID])
    }
}
