import Foundation
import Logging
import PostgresNIO
import StrataSync

/// One user's private database in a ``CloudStore``: the operations of
/// ``StrataSync/CloudDatabase`` on their own zones, each a transaction under row-level security.
public struct CloudStoreDatabase: Sendable {
    let store: CloudStore
    /// The user every request runs for.
    public let user: String

    public var scope: CloudDatabaseScope { .private }

    var logger: Logger { store.logger }

    // MARK: Zones

    /// Creates zones (or brings back deleted ones, with an empty feed from a new horizon).
    public func saveZones(_ zones: [CloudZoneID]) async throws {
        let (user, logger) = (user, logger)
        guard zones.allSatisfy({ $0.owner == user }) else { throw CloudError.permissionFailure(nil) }
        guard !zones.isEmpty else { return }
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
        guard zones.allSatisfy({ $0.owner == user }) else { throw CloudError.permissionFailure(nil) }
        guard !zones.isEmpty else { return }
        let names = zones.map(\.name)
        try await store.transaction(as: user) { connection in
            try await connection.query(
                "DELETE FROM strata_cloud.records WHERE owner = \(user) AND zone = ANY(\(names))", logger: logger)
            try await connection.query(
                "DELETE FROM strata_cloud.tombstones WHERE owner = \(user) AND zone = ANY(\(names))", logger: logger)
            let rows = try await connection.query(
                """
                UPDATE strata_cloud.zones SET deleted = true, sequence = sequence + 1, horizon = sequence + 1
                WHERE owner = \(user) AND name = ANY(\(names)) AND NOT deleted RETURNING name
                """,
                logger: logger)
            var deleted: [String] = []
            for try await name in rows.decode(String.self) { deleted.append(name) }
            if !deleted.isEmpty { try await Self.markChanged(deleted, of: user, on: connection, logger: logger) }
        }
    }

    static func ensureUser(_ user: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            "INSERT INTO strata_cloud.users (name) VALUES (\(user)) ON CONFLICT (name) DO NOTHING", logger: logger)
    }

    /// Moves the user's database feed past a change to `zones`. The user's row lock orders
    /// these positions by commit, as zone positions are.
    static func markChanged(_ zones: [String], of user: String, on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            WITH position AS (
                UPDATE strata_cloud.users SET database_sequence = database_sequence + 1 WHERE name = \(user)
                RETURNING database_sequence)
            UPDATE strata_cloud.zones SET database_change = (SELECT database_sequence FROM position)
            WHERE owner = \(user) AND name = ANY(\(zones))
            """,
            logger: logger)
    }

    // MARK: Reading records

    /// The records `ids` name: each found, or why not (another user's zone, a missing zone or
    /// record).
    public func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        guard ids.count <= store.limits.maximumItemsPerRequest else { throw CloudError.limitExceeded }
        let (user, logger) = (user, logger)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            var results: [CloudRecordID: Result<CloudRecord, CloudError>] = [:]
            for (zone, zoneIDs) in Dictionary(grouping: ids, by: \.zone) {
                guard zone.owner == user else {
                    for id in zoneIDs { results[id] = .failure(.permissionFailure(id)) }
                    continue
                }
                guard try await Self.zoneExists(zone, on: connection, logger: logger) else {
                    for id in zoneIDs { results[id] = .failure(.zoneNotFound(zone)) }
                    continue
                }
                let names = zoneIDs.map(\.name)
                var found: [String: CloudRecord] = [:]
                let rows = try await connection.query(
                    """
                    SELECT \(unescaped: RecordCoding.columns) FROM strata_cloud.records
                    WHERE owner = \(zone.owner) AND zone = \(zone.name) AND name = ANY(\(names))
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

    static func zoneExists(_ zone: CloudZoneID, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT 1 FROM strata_cloud.zones WHERE owner = \(zone.owner) AND name = \(zone.name) AND NOT deleted", logger: logger)
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }

    // MARK: Change feeds

    /// The user's zones that changed or were deleted since `token`.
    public func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        let start = try Self.position(of: token, prefix: "d")
        let (user, logger) = (user, logger)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            var end: Int64 = 0
            for try await position in try await connection.query(
                "SELECT database_sequence FROM strata_cloud.users WHERE name = \(user)", logger: logger
            ).decode(Int64.self) {
                end = position
            }
            var changed: [CloudZoneID] = []
            var deleted: [CloudZoneID] = []
            let rows = try await connection.query(
                """
                SELECT name, deleted FROM strata_cloud.zones WHERE owner = \(user) AND database_change > \(start) ORDER BY name
                """,
                logger: logger)
            for try await (name, isDeleted) in rows.decode((String, Bool).self) {
                if isDeleted { deleted.append(CloudZoneID(name: name, owner: user)) } else { changed.append(CloudZoneID(name: name, owner: user)) }
            }
            return CloudDatabaseChanges(changedZones: changed, deletedZones: deleted, token: CloudChangeToken("d:\(max(start, end))"))
        }
    }

    /// What changed in `zone` since `token`, oldest first, at most `limit` saves and deletions
    /// per page; ``StrataSync/CloudError/changeTokenExpired`` for a token from before the
    /// zone's tombstones were purged.
    public func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        guard zone.owner == user else { throw CloudError.permissionFailure(nil) }
        let start = try Self.position(of: token, prefix: "z")
        let pageSize = max(1, limit)
        let (user, logger) = (user, logger)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            var zoneState: (sequence: Int64, horizon: Int64)?
            for try await (sequence, horizon) in try await connection.query(
                "SELECT sequence, horizon FROM strata_cloud.zones WHERE owner = \(user) AND name = \(zone.name) AND NOT deleted",
                logger: logger
            ).decode((Int64, Int64).self) {
                zoneState = (sequence, horizon)
            }
            guard let zoneState else { throw CloudError.zoneNotFound(zone) }
            if token != nil && start < zoneState.horizon { throw CloudError.changeTokenExpired }
            let rows = try await connection.query(
                """
                SELECT sequence, name, type, fields, field_versions, parent, change_tag FROM (
                    SELECT sequence, name, type, fields::text, field_versions::text, parent, change_tag
                    FROM strata_cloud.records WHERE owner = \(user) AND zone = \(zone.name) AND sequence > \(start)
                    UNION ALL
                    SELECT sequence, name, type, NULL, NULL, NULL, NULL
                    FROM strata_cloud.tombstones WHERE owner = \(user) AND zone = \(zone.name) AND sequence > \(start)
                ) AS changes ORDER BY sequence LIMIT \(pageSize + 1)
                """,
                logger: logger)
            var page = CloudZoneChanges(changed: [], deleted: [], token: CloudChangeToken(""), moreComing: false)
            var last = start
            var count = 0
            for try await row in rows.decode((Int64, String, String, String?, String?, String?, String?).self) {
                count += 1
                if count > pageSize {
                    page.moreComing = true
                    break
                }
                last = row.0
                if let fields = row.3, let versions = row.4, let tag = row.6 {
                    page.changed.append(try RecordCoding.record(
                        zone: zone, name: row.1, type: row.2, fields: fields, versions: versions, parent: row.5, changeTag: tag))
                } else {
                    page.deleted.append(CloudTombstone(id: CloudRecordID(name: row.1, zone: zone), type: row.2))
                }
            }
            let end = page.moreComing ? last : max(start, zoneState.sequence, zoneState.horizon)
            page.token = CloudChangeToken("z:\(end)")
            return page
        }
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
