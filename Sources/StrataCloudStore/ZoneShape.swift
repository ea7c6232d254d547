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
    var existing = ExactKeyed<Existing>()
    /// The field versions kept by the tombstones of saved names the zone does not hold
    /// (`CloudModifyRules.isSuperseded(_:byDeleteOf:)`).
    var deleted = ExactKeyed<[String: HybridTimestamp]>()
    var children: [(name: String, parent: String)] = []
    var sharedRoots = ExactNames()
    /// The participants (the owner excluded) who see each shared root's records.
    var audiences = ExactKeyed<[String]>()
    /// The shared roots the request's user may write as a participant.
    var writableRoots = ExactNames()

    /// Records are looked up one name at a time (`unnest` with a `LATERAL` subquery that
    /// `OFFSET 0` keeps from being flattened), each on the whole primary key. With `name =
    /// ANY(names)`, PostgreSQL, while its statistics did not know the user (a new user's first
    /// sync), searched the primary key by owner and zone alone and filtered every record of the
    /// zone by name: 27 ms a request at 40,000 records, growing with the zone.
    ///
    /// - Parameters:
    ///   - names: the records the request saves or deletes, read whole.
    ///   - saved: the records the request saves: the tombstones of those the zone does not
    ///     hold are read for the versions they kept.
    ///   - parentsOnly: the parents of saved records that the request names nowhere else: of
    ///     those the rules need only whether they exist, their parent and their shared root,
    ///     and their fields are not read. A first sync's children name a parent each; reading
    ///     and decoding those parents' fields was a seventh of the service's work on a request.
    static func load(
        _ zone: CloudZoneID, names: [String], saved: [String], parentsOnly: [String] = [], children parents: [String],
        on connection: PostgresConnection, logger: Logger
    ) async throws -> ZoneShape {
        var shape = ZoneShape(zone: zone)
        let (owner, name) = (zone.owner, zone.name)
        var tombstones: [(name: String, versions: String)] = []
        for try await row in try await connection.execute(
            PreparedStatements.ZoneShapeRows(owner: owner, zone: name, names: names, saved: saved, parentsOnly: parentsOnly),
            logger: logger)
        {
            switch row.7 {
            case .record:
                let record = try RecordCoding.record(
                    zone: zone, name: row.0, type: row.1, fields: row.2, versions: row.3, parent: row.4, changeTag: row.5)
                shape.existing[row.0] = Existing(record: record, shareRoot: row.6)
            case .tombstone:
                tombstones.append((row.0, row.3))
            case .parent:
                let record = CloudRecord(
                    id: CloudRecordID(name: row.0, zone: zone), type: row.1, fields: [:], fieldVersions: [:],
                    parent: row.4.map { CloudRecordID(name: $0, zone: zone) }, changeTag: row.5)
                shape.existing[row.0] = Existing(record: record, shareRoot: row.6)
            case .shareRoot:
                shape.sharedRoots.insert(row.0)
            case .audience:
                shape.audiences[row.0, default: []].append(row.1)
            case .writableRoot:
                shape.writableRoots.insert(row.0)
            }
        }
        // In one order whatever order the rows came in: an audience is stored with tombstones.
        for root in shape.audiences.keys {
            shape.audiences[root]?.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }
        // A name saved again loses its tombstone in the same transaction, so a name is not both;
        // a record, if it were, is what counts.
        for (name, versions) in tombstones where shape.existing[name] == nil {
            shape.deleted[name] = try RecordCoding.decodeVersions(versions)
        }
        if !parents.isEmpty {
            for try await (child, parent) in try await connection.query(
                """
                SELECT child.name, child.parent FROM unnest(\(parents)::text[]) AS p(wanted)
                CROSS JOIN LATERAL (
                    SELECT r.name, r.parent FROM strata_cloud.records r
                    WHERE r.owner = \(owner) AND r.zone = \(name) AND r.parent = p.wanted OFFSET 0
                ) AS child
                """,
                logger: logger
            ).decode((String, String).self) {
                shape.children.append((child, parent))
            }
        }
        return shape
    }

    /// The participants who see the records under `root`.
    func audience(of root: String?) -> [String] {
        root.flatMap { audiences[$0] } ?? []
    }

    /// The shared root `name` is under once `saves` are applied (``CloudSharingRules``); a
    /// parent the request does not touch already knows its root (the `share_root` column), so
    /// the walk stops there instead of reading the rest of the chain.
    ///
    /// `pending` is ``pendingParents(of:)`` of the saves, made once per request: made per record,
    /// it cost a request of 400 saves 160,000 dictionary insertions.
    func shareRoot(after name: String, pending: ExactKeyed<CloudRecordID?>) -> String? {
        var stoppedAt: String?
        let root = CloudSharingRules.sharedRoot(
            of: name, in: zone,
            isSharedRoot: { sharedRoots.contains($0) },
            parentOf: { current in
                let parent = pending[current] ?? existing[current]?.record.parent
                if let parent, parent.zone == zone, pending[parent.name] == nil, !sharedRoots.contains(parent.name) {
                    stoppedAt = parent.name
                    return nil
                }
                return parent
            })
        if let root { return root }
        return stoppedAt.flatMap { existing[$0]?.shareRoot }
    }

    /// Each saved record's parent after the request, by name (the last save of a name wins).
    static func pendingParents(of saves: [CloudRecord]) -> ExactKeyed<CloudRecordID?> {
        ExactKeyed(saves.map { ($0.id.name, $0.parent) }, uniquingKeysWith: { $1 })
    }

    /// A participant's failures (``CloudSharingRules/participantFailures(saving:deleting:exists:isSharedRoot:rootBefore:rootAfter:canWrite:)``),
    /// answered from this shape.
    func permissionFailures(saving saves: [CloudRecord], deleting deletes: [CloudRecordID]) -> [CloudRecordID: CloudError] {
        let pending = Self.pendingParents(of: saves)
        return CloudSharingRules.participantFailures(
            saving: saves, deleting: deletes,
            exists: { existing[$0] != nil },
            isSharedRoot: { sharedRoots.contains($0) },
            rootBefore: { existing[$0]?.shareRoot },
            rootAfter: { shareRoot(after: $0, pending: pending) },
            canWrite: { writableRoots.contains($0) })
    }
}
