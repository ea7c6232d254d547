import Logging
import PostgresNIO
import StrataCloud

/// What a modify request needs to know of one zone before it writes: the records it names,
/// the children of records it deletes, the zone's shares with who sees each, and which shares
/// the request's user may write. Read under row-level security, so a participant's view is
/// all a participant's request can act on.
struct ZoneShape {
    struct Existing {
        var record: CloudRecord
        /// The shared root the record is under, if any.
        var shareRoot: String?
    }

    var zone: CloudZoneID
    var existing: [String: Existing] = [:]
    var children: [(name: String, parent: String)] = []
    var sharedRoots: Set<String> = []
    /// The participants (the owner excluded) who see each shared root's records.
    var audiences: [String: [String]] = [:]
    /// The shared roots the request's user may write as a participant.
    var writableRoots: Set<String> = []

    static func load(
        _ zone: CloudZoneID, names: [String], children parents: [String], on connection: PostgresConnection, logger: Logger
    ) async throws -> ZoneShape {
        var shape = ZoneShape(zone: zone)
        let (owner, name) = (zone.owner, zone.name)
        for try await row in try await connection.query(
            """
            SELECT \(unescaped: RecordCoding.columns), share_root FROM strata_cloud.records
            WHERE owner = \(owner) AND zone = \(name) AND name = ANY(\(names))
            """,
            logger: logger
        ).decode((String, String, String, String, String?, String, String?).self) {
            let record = try RecordCoding.record(
                zone: zone, name: row.0, type: row.1, fields: row.2, versions: row.3, parent: row.4, changeTag: row.5)
            shape.existing[row.0] = Existing(record: record, shareRoot: row.6)
        }
        if !parents.isEmpty {
            for try await (child, parent) in try await connection.query(
                "SELECT name, parent FROM strata_cloud.records WHERE owner = \(owner) AND zone = \(name) AND parent = ANY(\(parents))",
                logger: logger
            ).decode((String, String).self) {
                shape.children.append((child, parent))
            }
        }
        for try await root in try await connection.query(
            "SELECT root FROM strata_cloud.shares WHERE owner = \(owner) AND zone = \(name)", logger: logger
        ).decode(String.self) {
            shape.sharedRoots.insert(root)
        }
        if !shape.sharedRoots.isEmpty {
            for try await (root, participant) in try await connection.query(
                """
                SELECT root, participant FROM strata_cloud.share_participants
                WHERE owner = \(owner) AND zone = \(name) AND acceptance = 'accepted' AND permission <> 'none' AND participant <> owner
                ORDER BY participant
                """,
                logger: logger
            ).decode((String, String).self) {
                shape.audiences[root, default: []].append(participant)
            }
            for try await root in try await connection.query(
                "SELECT root FROM strata_cloud.writable_shares() WHERE owner = \(owner) AND zone = \(name)", logger: logger
            ).decode(String.self) {
                shape.writableRoots.insert(root)
            }
        }
        return shape
    }

    /// The participants who see the records under `root`.
    func audience(of root: String?) -> [String] {
        root.flatMap { audiences[$0] } ?? []
    }

    /// The shared root `name` is under once `saves` are applied: the first record on its
    /// parent chain (itself included) that is shared.
    func shareRoot(after name: String, saving saves: [CloudRecord]) -> String? {
        let pending = Dictionary(saves.map { ($0.id.name, $0.parent) }, uniquingKeysWith: { $1 })
        var current = name
        var seen: Set<String> = []
        while seen.insert(current).inserted {
            if sharedRoots.contains(current) { return current }
            let parent: CloudRecordID?
            if let pendingParent = pending[current] { parent = pendingParent } else { parent = existing[current]?.record.parent }
            guard let parent, parent.zone == zone else { return nil }
            if pending[parent.name] == nil {
                // A parent the request does not touch already knows its root.
                return sharedRoots.contains(parent.name) ? parent.name : existing[parent.name]?.shareRoot
            }
            current = parent.name
        }
        return nil
    }

    /// A participant's failures: every record saved must be (and stay) under a share they may
    /// write; a delete must concern such a record, and never a shared root (a participant
    /// leaves with `deleteShare`).
    func permissionFailures(saving saves: [CloudRecord], deleting deletes: [CloudRecordID]) -> [CloudRecordID: CloudError] {
        var failures: [CloudRecordID: CloudError] = [:]
        let writable: (String?) -> Bool = { root in root.map(writableRoots.contains) ?? false }
        for record in saves {
            let before = existing[record.id.name]
            if !writable(shareRoot(after: record.id.name, saving: saves)) || (before != nil && !writable(before?.shareRoot)) {
                failures[record.id] = .permissionFailure(record.id)
            }
        }
        for id in deletes {
            guard let before = existing[id.name], !sharedRoots.contains(id.name), writable(before.shareRoot) else {
                failures[id] = .permissionFailure(id)
                continue
            }
        }
        return failures
    }
}
