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
    static func zoneToken(_ zone: CloudZoneID) -> String { "token.zone" + zonePart(zone) }
    static func zoneCreated(_ zone: CloudZoneID) -> String { "zone.created" + zonePart(zone) }

    /// A zone's part of its keys, one text per zone.
    ///
    /// Earlier versions joined owner and name with a dot, which two zones could share: alice's
    /// zone `strata.default` and the zone `default` of a user named `alice.strata` were both
    /// `alice.strata.default`. Sharing a change token, a fetch of either zone went on from the
    /// other's position and skipped its own changes in between. That form is kept for owners
    /// without a dot, where the first dot ends the owner (so their tokens stay valid); an
    /// owner with a dot gets `:` (which no earlier key has there), the owner's UTF-8 length,
    /// `:`, owner and name.
    static func zonePart(_ zone: CloudZoneID) -> String {
        guard zone.owner.utf8.contains(UInt8(ascii: ".")) else { return legacyZonePart(zone) }
        return ":\(zone.owner.utf8.count):\(zone.owner)\(zone.name)"
    }

    private static func legacyZonePart(_ zone: CloudZoneID) -> String { ".\(zone.owner).\(zone.name)" }

    /// Set once the keys an earlier version wrote for zones of owners with a dot are gone.
    static let zoneKeysChecked = "keys.zonePartChecked"

    /// Forgets, once, the tokens and marks an earlier version kept in the form that zones of
    /// owners with a dot share with others (``zonePart(_:)``): whichever zone wrote one last,
    /// neither can trust it. Every owner with a dot the metadatabase knows counts (the
    /// signed-in user, and the owner of any record it keeps, sent, waiting, quarantined or
    /// moved), with every zone of theirs: a zone whose records are all gone still had a token.
    /// The zones that spelled a forgotten key are fetched from the start once (a fetch from
    /// the start applies what the device has already as no change), and their creation is
    /// checked again; no other zone's keys change.
    static func forgetAmbiguousZoneKeys(in db: Database) throws {
        guard try value(zoneKeysChecked, in: db) == nil else { return }
        let ownerSources = [
            MetadatabaseTable.metadata, .unsyncedRecords, .waitingContent, .quarantinedRecords, .movedRecords,
        ].map { "SELECT ownerName AS owner FROM \($0.qualifiedName)" }
        let dotted = try String.fetchAll(
            db,
            sql: """
                SELECT DISTINCT owner FROM (\(ownerSources.joined(separator: " UNION ALL ")) UNION ALL SELECT ? AS owner)
                WHERE instr(owner, '.') > 0
                """,
            arguments: [try value(userName, in: db)])
        for owner in dotted {
            // Compared by prefix, not LIKE: an owner may hold `%` or `_`.
            for prefix in ["token.zone.\(owner).", "zone.created.\(owner)."] {
                try db.execute(
                    sql: "DELETE FROM \(MetadatabaseTable.state.qualifiedName) WHERE substr(key, 1, length(?1)) = ?1",
                    arguments: [prefix])
            }
        }
        try set(zoneKeysChecked, to: "1", in: db)
    }

    /// Set by a resync until the database's next full fetch: zones listed as deleted then
    /// are not taken as deletions (the cloud lost them; the resync sends their rows again).
    static func resyncing(_ scope: CloudDatabaseScope) -> String { "resync.\(scope.rawValue)" }
    /// Set by a resync until a send leaves nothing pending: a save the cloud refuses as
    /// superseded by a delete is sent again, newer, instead of deleting the row (a resync
    /// keeps every local row).
    static let resyncSending = "resync.sending"

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
