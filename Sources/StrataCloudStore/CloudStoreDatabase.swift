import Foundation
import Logging
import PostgresNIO
import StrataCloud

/// One user's database in a ``CloudStore``: the private one (their own zones) or the shared
/// one (the shared records of other users' zones, for shares they accepted). Every operation of
/// `CloudDatabase` is one transaction under row-level security, as that user.
public struct CloudStoreDatabase: CloudDatabase {
    let store: CloudStore
    /// The user every request runs for.
    public let user: String
    /// Which of the user's databases this is.
    public let scope: CloudDatabaseScope

    var logger: Logger { store.logger }

    // MARK: Zones

    /// Creates zones (or brings back deleted ones, with an empty feed from a new horizon).
    public func saveZones(_ zones: [CloudZoneID]) async throws {
        let (user, logger) = (user, logger)
        guard scope == .private, zones.allSatisfy({ $0.owner == user }) else { throw CloudError.permissionFailure(nil) }
        guard !zones.isEmpty else { return }
        // Each statement below locks its zone's row: in the one order every request takes
        // zones in (`ZoneLockOrder`), or two requests naming the same zones deadlock.
        let zones = ZoneLockOrder.sorted(zones)
        try await store.transaction(as: user) { connection in
            try await Self.ensureUser(user, on: connection, logger: logger)
            var changed = false
            for zone in zones {
                let rows = try await connection.query(
                    """
                    INSERT INTO strata_cloud.zones (owner, name, database_change) VALUES (\(user), \(zone.name), 0)
                    ON CONFLICT (owner, name) DO UPDATE SET deleted = false, horizon = strata_cloud.zones.sequence
                    WHERE strata_cloud.zones.deleted
                    RETURNING name
                    """,
                    logger: logger)
                for try await _ in rows.decode(String.self) { changed = true }
            }
            if changed { try await Self.markChanged(zones.map(\.name), of: user, on: connection, logger: logger) }
        }
    }

    /// Deletes zones and everything in them; other devices see them in the deleted zones of
    /// their next database fetch.
    public func deleteZones(_ zones: [CloudZoneID]) async throws {
        let (user, logger) = (user, logger)
        guard scope == .private, zones.allSatisfy({ $0.owner == user }) else { throw CloudError.permissionFailure(nil) }
        guard !zones.isEmpty else { return }
        let asked = zones.map(\.name)
        try await store.transaction(as: user) { connection in
            // The zones' rows are locked first, as every write of their records locks them: a
            // write holding one commits before anything below is read, so its records are
            // deleted and its bytes freed with the rest. (Read before the lock, the sizes
            // missed such a write's records, and the owner's stored bytes kept them for ever.)
            // In the order of their names' bytes (`ZoneLockOrder`), whatever the database's
            // collation, as every request takes zones.
            //
            // Everything below acts on the zones locked here, never on the names asked for: a
            // zone that did not exist yet locks nothing, and each statement below reads anew,
            // so one made and written meanwhile would have its rows read and deleted while its
            // writers held it, then been marked deleted with rows or a share they committed
            // after (an outside tester's finding). Deleting a zone that is not there does
            // nothing; one made afterwards is a new zone.
            var names: [String] = []
            for try await name in try await connection.query(
                """
                SELECT name FROM strata_cloud.zones WHERE owner = \(user) AND name = ANY(\(asked))
                ORDER BY name COLLATE "C" FOR UPDATE
                """,
                logger: logger
            ).decode(String.self) {
                names.append(name)
            }
            guard !names.isEmpty else { return }
            // Participants of the zones' shares lose them with the zones: they hear it too.
            var participants: [String] = []
            for try await participant in try await connection.query(
                "SELECT DISTINCT participant FROM strata_cloud.share_participants WHERE owner = \(user) AND zone = ANY(\(names))",
                logger: logger
            ).decode(String.self) {
                participants.append(participant)
            }
            var freed: Int64 = 0
            for try await size in try await connection.query(
                "SELECT coalesce(sum(size), 0)::bigint FROM strata_cloud.records WHERE owner = \(user) AND zone = ANY(\(names))",
                logger: logger
            ).decode(Int64.self) {
                freed = size
            }
            try await CloudStoreDatabase.useBytes(-freed, of: user, quota: nil, on: connection, logger: logger)
            try await connection.perform(
                "DELETE FROM strata_cloud.records WHERE owner = \(user) AND zone = ANY(\(names))", logger: logger)
            try await connection.perform(
                "DELETE FROM strata_cloud.tombstones WHERE owner = \(user) AND zone = ANY(\(names))", logger: logger)
            // The zones' shares end with them, their participants with each share (`ON DELETE
            // CASCADE`), and so do the records' departures. A share left behind applied again
            // to the zone made anew under the same name: a record saved there under the old
            // root's name was shared with the former participants, who had never been offered it.
            try await connection.perform(
                """
                WITH departed AS (DELETE FROM strata_cloud.departures WHERE owner = \(user) AND zone = ANY(\(names)) RETURNING 1)
                DELETE FROM strata_cloud.shares WHERE owner = \(user) AND zone = ANY(\(names))
                """,
                logger: logger)
            let rows = try await connection.query(
                """
                UPDATE strata_cloud.zones SET deleted = true, sequence = sequence + 1, horizon = sequence + 1
                WHERE owner = \(user) AND name = ANY(\(names)) AND NOT deleted RETURNING name
                """,
                logger: logger)
            var deleted: [String] = []
            for try await name in rows.decode(String.self) { deleted.append(name) }
            if !deleted.isEmpty {
                try await Self.markChanged(deleted, of: user, notifying: participants, on: connection, logger: logger)
            }
        }
    }

    static func ensureUser(_ user: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.perform(
            "INSERT INTO strata_cloud.users (name) VALUES (\(user)) ON CONFLICT (name) DO NOTHING", logger: logger)
    }

    /// Moves the owner's database feed past a change to `zones` and tells listening service
    /// instances who should fetch (`extra`: participants who just lost access). The user row's
    /// lock orders database positions by commit, as the zone row's lock orders zone positions.
    static func markChanged(
        _ zones: [String], of owner: String, notifying extra: [String] = [], on connection: PostgresConnection, logger: Logger
    ) async throws {
        try await connection.perform("SELECT strata_cloud.mark_database_change(\(owner), \(zones))", logger: logger)
        for zone in zones {
            try await connection.perform("SELECT strata_cloud.notify_zone_change(\(owner), \(zone), \(extra))", logger: logger)
        }
    }

    // MARK: Reading records

    /// Whether this database reaches `zone` at all: the user's own zones through the private
    /// database; through the shared one, other users' zones holding a share the user accepted.
    func reaches(_ zone: CloudZoneID) -> Bool {
        scope == .private ? zone.owner == user : zone.owner != user
    }

    /// The records `ids` name: each found, or why not. A record the user may not see is
    /// reported as unknown, as a missing one is: the store does not tell who holds what.
    public func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        try store.limits.checkFetch(count: ids.count)
        let (user, logger, scope) = (user, logger, scope)
        let reaches = reaches
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            var results: [CloudRecordID: Result<CloudRecord, CloudError>] = [:]
            for (zone, zoneIDs) in Dictionary(grouping: ids, by: \.zone) {
                let exists = try await Self.zoneExists(zone, on: connection, logger: logger)
                guard reaches(zone), exists || scope == .private else {
                    for id in zoneIDs { results[id] = .failure(.permissionFailure(id)) }
                    continue
                }
                guard exists else {
                    for id in zoneIDs { results[id] = .failure(.zoneNotFound(zone)) }
                    continue
                }
                let names = zoneIDs.map(\.name)
                var found = ExactKeyed<CloudRecord>()
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: RecordCoding.columns) FROM unnest(\(names)::text[]) AS n(wanted)
                    CROSS JOIN LATERAL (
                        SELECT * FROM strata_cloud.records r
                        WHERE r.owner = \(zone.owner) AND r.zone = \(zone.name) AND r.name = n.wanted OFFSET 0) AS record
                    """,
                    logger: logger)
                for try await row in rows.decode(RecordCoding.Row.self) {
                    found[row.0] = try RecordCoding.record(
                        zone: zone, name: row.0, type: row.1, fields: row.2, versions: row.3, parent: row.4, changeTag: row.5)
                }
                for id in zoneIDs { results[id] = found[id.name].map { .success($0) } ?? .failure(.unknownItem(id)) }
            }
            return results
        }
    }

    /// Whether the zone exists and the request's user sees it (row-level security hides other
    /// users' zones that hold no share they accepted).
    static func zoneExists(_ zone: CloudZoneID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT 1 FROM strata_cloud.zones WHERE owner = \(zone.owner) AND name = \(zone.name) AND NOT deleted", logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    /// The position a token encodes; a token this store did not issue has expired.
    static func position(of token: CloudChangeToken?, prefix: String) throws -> Int64 {
        guard let token else { return 0 }
        let parts = token.value.split(separator: ":")
        guard parts.count == 2, parts[0] == prefix, let position = Int64(parts[1]), position >= 0 else {
            throw CloudError.changeTokenExpired
        }
        return position
    }
}
