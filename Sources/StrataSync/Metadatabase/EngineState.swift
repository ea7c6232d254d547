import StrataSQLite

/// The engine's key-value state in the metadatabase: change tokens, the device id, the clock's
/// last timestamp, how far the change log was drained.
enum EngineState {
    static func value(_ key: String, in db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT value FROM strata_sync.state WHERE key = ?", arguments: [key])
    }

    static func set(_ key: String, to value: String?, in db: Database) throws {
        if let value {
            try db.execute(sql: "INSERT OR REPLACE INTO strata_sync.state (key, value) VALUES (?, ?)", arguments: [key, value])
        } else {
            try db.execute(sql: "DELETE FROM strata_sync.state WHERE key = ?", arguments: [key])
        }
    }

    static let deviceID = "deviceID"
    static let lastTimestamp = "clock.lastTimestamp"
    static let drainedThrough = "changeLog.drainedThrough"
    static let userName = "account.userName"

    static func databaseToken(_ scope: CloudDatabaseScope) -> String { "token.database.\(scope.rawValue)" }
    static func zoneToken(_ zone: CloudZoneID) -> String { "token.zone.\(zone.owner).\(zone.name)" }
}
