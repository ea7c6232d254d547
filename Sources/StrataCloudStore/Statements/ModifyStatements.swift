import PostgresNIO

/// The statements of a modify request that runs on one zone (``CloudStoreDatabase``'s
/// `modify`), in the order it runs them.
extension PreparedStatements {
    /// Locks the zone's row until commit and reads its position.
    struct LockZone: PostgresPreparedStatement {
        static let name = "strata_lock_zone"
        static let sql = "SELECT sequence FROM strata_cloud.zones WHERE owner = $1 AND name = $2 AND NOT deleted FOR UPDATE"
        typealias Row = Int64

        var owner: String
        var zone: String

        func makeBindings() throws -> PostgresBindings {
            return PostgresBindings.zone(owner: owner, name: zone)
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Int64.self) }
    }

    /// What a modify request reads of its zone once the zone is locked, in one statement (one
    /// round trip, where it took up to five), each row marked with its ``ZoneShapeRowKind``:
    ///
    /// - the records the request names (`$3`), whole, with their shared roots; one name at a
    ///   time on the whole primary key (see `ZoneShape.load`);
    /// - the field versions kept by the tombstones of the saved names (`$4`), which a save of a
    ///   name the zone does not hold is checked against (`CloudModifyRules.isSuperseded`);
    ///   tombstones written before they kept versions are left out. Only in a zone that has
    ///   tombstones at all (a one-time filter, checked once): a new user's first sync names
    ///   hundreds of new records a request, and looking each up among the tombstones cost
    ///   2–3 ms a request of 400;
    /// - the parents the request names only as parents (`$5`): whether each exists, its parent,
    ///   tag and shared root, without its fields;
    /// - the roots of the zone's shares, and in a zone that has shares, who sees each (its
    ///   accepted participants but the owner) and which the request's user may write as a
    ///   participant.
    ///
    /// Read after the zone's lock, in a statement of its own: under `READ COMMITTED` each
    /// statement sees what was committed when it started, so a share another request created
    /// while this one waited for the lock is seen. Read in the lock's own statement, the shares
    /// would be those of the moment before the wait.
    struct ZoneShapeRows: PostgresPreparedStatement {
        static let name = "strata_zone_shape_rows"
        static let sql = """
            SELECT \(RecordCoding.columns), share_root, \(ZoneShapeRowKind.record.rawValue) FROM unnest($3::text[]) AS n(wanted)
            CROSS JOIN LATERAL (
                SELECT * FROM strata_cloud.records r WHERE r.owner = $1 AND r.zone = $2 AND r.name = n.wanted OFFSET 0
            ) AS record
            UNION ALL
            SELECT found.name, '', '{}', found.field_versions::text, NULL, '', NULL, \(ZoneShapeRowKind.tombstone.rawValue)
            FROM unnest($4::text[]) AS n(wanted)
            CROSS JOIN LATERAL (
                SELECT t.name, t.field_versions FROM strata_cloud.tombstones t
                WHERE t.owner = $1 AND t.zone = $2 AND t.name = n.wanted AND t.field_versions IS NOT NULL OFFSET 0
            ) AS found
            WHERE EXISTS (SELECT 1 FROM strata_cloud.tombstones kept WHERE kept.owner = $1 AND kept.zone = $2)
            UNION ALL
            SELECT parent.name, parent.type, '{}', '{}', parent.parent, parent.change_tag, parent.share_root,
                \(ZoneShapeRowKind.parent.rawValue)
            FROM unnest($5::text[]) AS n(wanted)
            CROSS JOIN LATERAL (
                SELECT r.name, r.type, r.parent, r.change_tag, r.share_root FROM strata_cloud.records r
                WHERE r.owner = $1 AND r.zone = $2 AND r.name = n.wanted OFFSET 0
            ) AS parent
            UNION ALL
            SELECT s.root, '', '{}', '{}', NULL, '', NULL, \(ZoneShapeRowKind.shareRoot.rawValue)
            FROM strata_cloud.shares s WHERE s.owner = $1 AND s.zone = $2
            UNION ALL
            SELECT p.root, p.participant, '{}', '{}', NULL, '', NULL, \(ZoneShapeRowKind.audience.rawValue)
            FROM strata_cloud.share_participants p
            WHERE p.owner = $1 AND p.zone = $2 AND p.acceptance = 'accepted' AND p.permission <> 'none' AND p.participant <> p.owner
                AND EXISTS (SELECT 1 FROM strata_cloud.shares s WHERE s.owner = $1 AND s.zone = $2)
            UNION ALL
            SELECT w.root, '', '{}', '{}', NULL, '', NULL, \(ZoneShapeRowKind.writableRoot.rawValue)
            FROM strata_cloud.writable_shares() w
            WHERE w.owner = $1 AND w.zone = $2 AND EXISTS (SELECT 1 FROM strata_cloud.shares s WHERE s.owner = $1 AND s.zone = $2)
            """
        typealias Row = (String, String, String, String, String?, String, String?, ZoneShapeRowKind)

        var owner: String
        var zone: String
        var names: [String]
        /// The names the request saves, whose tombstones' versions are read.
        var saved: [String]
        /// The parents the request names nowhere else.
        var parentsOnly: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings.zone(owner: owner, name: zone, capacity: 5)
            bindings.append(names)
            bindings.append(saved)
            bindings.append(parentsOnly)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let (name, type, fields, versions, parent, tag, root, number) = try row.decode(
                (String, String, String, String, String?, String, String?, Int32).self)
            guard let kind = ZoneShapeRowKind(rawValue: number) else { throw UnknownZoneShapeRowKind(number: number) }
            return (name, type, fields, versions, parent, tag, root, kind)
        }
    }

    /// A ``ZoneShapeRows`` row of a kind this version does not know: the statement and
    /// ``ZoneShapeRowKind`` disagree, a programming error, reported rather than trapped on.
    struct UnknownZoneShapeRowKind: Error {
        var number: Int32
    }

    /// What a row of ``ZoneShapeRows`` tells, in its last column.
    enum ZoneShapeRowKind: Int32 {
        /// A named record: name, type, fields, versions, parent, tag, shared root.
        case record = 0
        /// A saved name's tombstone: name and the versions it kept.
        case tombstone = 1
        /// A parent named only as a parent: name, type, parent, tag, shared root.
        case parent = 2
        /// A share's root: its name.
        case shareRoot = 3
        /// A participant who sees a share's records: the root's name, the participant's in the
        /// type's column.
        case audience = 4
        /// A share the request's user may write as a participant: its root's name.
        case writableRoot = 5
    }

    /// Writes the saved records (arrays unnested server-side, one round trip per request), and
    /// forgets the tombstones of the names saved again, in one statement: the two touch
    /// different tables, so neither needs to see what the other wrote.
    struct WriteRecords: PostgresPreparedStatement {
        static let name = "strata_write_records"
        static let sql = """
            WITH saved AS (
                INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, parent, change_tag, sequence, size, share_root)
                SELECT $1, $2, r.name, r.type, r.fields::jsonb, r.versions::jsonb,
                    CASE WHEN r.has_parent THEN r.parent END, r.tag, r.position, r.size, CASE WHEN r.has_root THEN r.root END
                FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::boolean[], $9::text[], $10::bigint[],
                    $11::bigint[], $12::text[], $13::boolean[])
                    AS r(name, type, fields, versions, parent, has_parent, tag, position, size, root, has_root)
                ON CONFLICT (owner, zone, name) DO UPDATE SET
                    type = excluded.type, fields = excluded.fields, field_versions = excluded.field_versions,
                    parent = excluded.parent, change_tag = excluded.change_tag, sequence = excluded.sequence, size = excluded.size,
                    share_root = excluded.share_root
                RETURNING 1),
            revived AS (
                DELETE FROM strata_cloud.tombstones t USING (
                    SELECT found.ctid AS row FROM unnest($3::text[]) AS n(wanted)
                    CROSS JOIN LATERAL (
                        SELECT x.ctid FROM strata_cloud.tombstones x WHERE x.owner = $1 AND x.zone = $2 AND x.name = n.wanted OFFSET 0
                    ) AS found
                ) AS gone
                WHERE t.ctid = gone.row
                RETURNING 1),
            moved AS (
                UPDATE strata_cloud.zones SET sequence = $14 WHERE owner = $1 AND name = $2 AND $14::bigint IS NOT NULL
                RETURNING 1)
            SELECT (SELECT count(*) FROM saved), (SELECT count(*) FROM revived), (SELECT count(*) FROM moved)
            """
        typealias Row = (Int64, Int64, Int64)

        var owner: String
        var zone: String
        /// The zone's position after the request, when the records are its last positions
        /// (``MoveZonePosition`` in the same round trip); nil to leave the zone's row alone.
        var zonePosition: Int64?
        var names: [String] = []
        var types: [String] = []
        var fields: [String] = []
        var versions: [String] = []
        var parents: [String] = []
        var hasParent: [Bool] = []
        var tags: [String] = []
        var positions: [Int64] = []
        var sizes: [Int64] = []
        var roots: [String] = []
        var hasRoot: [Bool] = []

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings.zone(owner: owner, name: zone, capacity: 14)
            bindings.append(names)
            bindings.append(types)
            bindings.append(fields)
            bindings.append(versions)
            bindings.append(parents)
            bindings.append(hasParent)
            bindings.append(tags)
            bindings.append(positions)
            bindings.append(sizes)
            bindings.append(roots)
            bindings.append(hasRoot)
            bindings.append(zonePosition)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Moves the zone's position past the request's changes. A statement of its own:
    /// `mark_database_change` below writes the same row.
    struct MoveZonePosition: PostgresPreparedStatement {
        static let name = "strata_move_zone_position"
        static let sql = "UPDATE strata_cloud.zones SET sequence = $3 WHERE owner = $1 AND name = $2"
        typealias Row = ()

        var owner: String
        var zone: String
        var position: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings.zone(owner: owner, name: zone, capacity: 3)
            bindings.append(position)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {}
    }

    /// What every modify of one zone ends with: the quota (when the zone grew: `use_bytes`
    /// would write the user's row anyway), the owner's database feed, and the hint. The
    /// functions are volatile, so each sees what the ones before it wrote.
    struct FinishChange: PostgresPreparedStatement {
        static let name = "strata_finish_change"
        static let sql = """
            SELECT CASE WHEN $3 = 0 THEN true ELSE strata_cloud.use_bytes($1, $3, $4) END,
                strata_cloud.mark_database_change($1, ARRAY[$2]::text[])::text,
                strata_cloud.notify_zone_change($1, $2, $5::text[])::text
            """
        typealias Row = (Bool, String?, String?)

        var owner: String
        var zone: String
        var growth: Int64
        var quota: Int64?
        var notifying: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings.zone(owner: owner, name: zone, capacity: 5)
            bindings.append(growth)
            bindings.append(quota)
            bindings.append(notifying)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }
}
