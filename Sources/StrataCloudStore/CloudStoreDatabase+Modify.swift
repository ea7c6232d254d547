import Foundation
import Logging
import PostgresNIO
import StrataCloud

extension CloudStoreDatabase {
    /// Saves and deletes records: atomic per zone (one failure fails the zone's other
    /// operations with `CloudError.batchRequestFailed(_:)` and changes nothing),
    /// with change-tag checks, reference checks, tombstones, and a new tag for every parent that
    /// gained a child.
    ///
    /// - Throws: `CloudError.limitExceeded` for a request over ``CloudStore/limits``.
    public func modifyRecords(saving saves: [CloudRecord], deleting deletes: [CloudRecordID]) async throws -> CloudModifyResult {
        try store.limits.checkModify(saving: saves, deletingCount: deletes.count)
        var result = CloudModifyResult()
        let zones = ZoneLockOrder.sorted(saves.map(\.id.zone) + deletes.map(\.zone))
        for zone in zones {
            let zoneSaves = saves.filter { $0.id.zone == zone }
            let zoneDeletes = deletes.filter { $0.zone == zone }
            let zoneResult = try await modify(zone, saving: zoneSaves, deleting: zoneDeletes)
            result.saveResults.merge(zoneResult.saveResults) { $1 }
            result.deleteResults.merge(zoneResult.deleteResults) { $1 }
        }
        return result
    }

    private func modify(
        _ zone: CloudZoneID, saving saves: [CloudRecord], deleting deletes: [CloudRecordID]
    ) async throws -> CloudModifyResult {
        @Sendable func failAll(_ failure: (CloudRecordID) -> CloudError) -> CloudModifyResult {
            var result = CloudModifyResult()
            for record in saves { result.saveResults[record.id] = .failure(failure(record.id)) }
            for id in deletes { result.deleteResults[id] = .failure(failure(id)) }
            return result
        }
        guard reaches(zone) else { return failAll { .permissionFailure($0) } }
        let (user, logger, scope, store) = (user, logger, scope, store)
        return try await store.transaction(as: user) { connection in
            // The zone's row lock orders this request's positions against every other writer
            // of the zone until commit, and nothing the checks read below can change before
            // then. Row-level security lets a participant lock only a zone where they may
            // write some share. Only a zone not locked is looked for, to tell a missing zone
            // from one the user may not write (one round trip fewer on every modify).
            guard var position = try await Self.lockZone(zone, on: connection, logger: logger) else {
                guard try await Self.zoneExists(zone, on: connection, logger: logger) else {
                    return failAll { scope == .private ? .zoneNotFound(zone) : .permissionFailure($0) }
                }
                return failAll { .permissionFailure($0) }
            }
            let saveNames = saves.map(\.id.name)
            let deleteNames = deletes.map(\.name)
            let parentNames = saves.compactMap { $0.parent?.zone == zone ? $0.parent?.name : nil }
            let named = ExactNames(saveNames + deleteNames)
            let shape = try await ZoneShape.load(
                zone, names: saveNames + deleteNames, saved: saveNames, parentsOnly: Array(ExactNames(parentNames).subtracting(named)),
                children: deleteNames,
                on: connection, logger: logger)
            let plan: ZoneModifyPlan
            switch ZoneModifyPlan.make(saving: saves, deleting: deletes, in: zone, shape: shape, shared: scope == .shared) {
            case .failure(let refusal): return failAll { refusal.error(for: $0) }
            case .success(let made): plan = made
            }

            var result = CloudModifyResult()
            for id in deletes { result.deleteResults[id] = .success(()) }
            for deletion in plan.deletions {
                let id = deletion.id
                position += 1
                // The tombstone keeps the versions the record had, which a save sent again
                // after its lost answer is compared with (`CloudModifyRules`).
                try await connection.perform(
                    """
                    WITH gone AS (
                        DELETE FROM strata_cloud.records
                        WHERE owner = \(zone.owner) AND zone = \(zone.name) AND name = \(id.name)
                        RETURNING field_versions)
                    INSERT INTO strata_cloud.tombstones (owner, zone, name, type, sequence, audience, field_versions)
                    SELECT \(zone.owner), \(zone.name), \(id.name), \(deletion.type), \(position), \(deletion.audience), gone.field_versions
                    FROM gone
                    ON CONFLICT (owner, zone, name) DO UPDATE SET type = excluded.type, sequence = excluded.sequence,
                        audience = excluded.audience, field_versions = excluded.field_versions
                    """,
                    logger: logger)
                if deletion.endsShare {
                    try await connection.perform(
                        "DELETE FROM strata_cloud.shares WHERE owner = \(zone.owner) AND zone = \(zone.name) AND root = \(id.name)",
                        logger: logger)
                }
            }
            // A parent that gained a child gets a new tag, as CloudKit gives one, in one statement
            // (a first sync of children touches a parent per record). Its new position comes
            // before the request's saves: the feed lists a parent before its new children, so a
            // device fetching in pages does not get children whose parent is on the next page
            // (they would wait, and be retried, page after page).
            // Found one name at a time on the whole primary key (see `ZoneShape.load`), then
            // updated by row: joined with `unnest`, or with `name = ANY`, PostgreSQL read every
            // record of the zone while its statistics did not know the user.
            if !plan.touchedParents.isEmpty {
                let base = position
                position += Int64(plan.touchedParents.count)
                try await connection.perform(
                    """
                    UPDATE strata_cloud.records r SET change_tag = 't' || (\(base) + found.ordinal), sequence = \(base) + found.ordinal
                    FROM (
                        SELECT record.ctid AS row, n.ordinal FROM unnest(\(plan.touchedParents)::text[]) WITH ORDINALITY AS n(wanted, ordinal)
                        CROSS JOIN LATERAL (
                            SELECT x.ctid FROM strata_cloud.records x
                            WHERE x.owner = \(zone.owner) AND x.zone = \(zone.name) AND x.name = n.wanted OFFSET 0
                        ) AS record
                    ) AS found
                    WHERE r.ctid = found.row
                    """,
                    logger: logger)
            }
            var written: [(record: CloudRecord, shareRoot: String?, position: Int64)] = []
            for (record, shareRoot) in plan.writes {
                var record = record
                position += 1
                record.changeTag = "t\(position)"
                written.append((record, shareRoot, position))
                result.saveResults[record.id] = .success(record)
            }
            // Without moves, the records' positions are the zone's last, and the zone's row
            // moves in the write's own statement (one round trip fewer on every push).
            let zoneMoved = try await Self.write(
                written, in: zone, movingZoneTo: plan.moves.isEmpty ? position : nil, on: connection, logger: logger)
            for move in plan.moves {
                position = try await Self.moveSubtree(
                    of: move.name, in: zone, to: move.rootAfter, after: position, on: connection, logger: logger)
                for try await last in try await connection.query(
                    "SELECT strata_cloud.record_departures(\(zone.owner), \(zone.name), \(move.name), \(move.leaving), \(position))",
                    logger: logger
                ).decode(Int64.self) {
                    position = last
                }
            }
            if !zoneMoved {
                try await connection.run(
                    PreparedStatements.MoveZonePosition(owner: zone.owner, zone: zone.name, position: position), logger: logger)
            }
            try await Self.finishChange(
                of: zone, growth: plan.growth, quota: store.limits.maximumBytesPerUser, notifying: plan.endedShareAudience,
                on: connection, logger: logger)
            if let hook = store.beforeModifyCommit.withLock({ $0 }) { await hook() }
            return result
        }
    }

    /// What every modify of one zone ends with, in one statement (one round trip, not three):
    /// counts `growth` against the owner's quota (``useBytes(_:of:quota:on:logger:)``), moves
    /// the owner's database feed past the zone, and hints everyone who sees it. Over the quota,
    /// the whole transaction fails with `CloudError.quotaExceeded` and nothing it wrote stays
    /// (the notification included: PostgreSQL sends it at commit).
    static func finishChange(
        of zone: CloudZoneID, growth: Int64, quota: Int64?, notifying extra: [String], on connection: PostgresConnection,
        logger: Logger
    ) async throws {
        let finish = PreparedStatements.FinishChange(owner: zone.owner, zone: zone.name, growth: growth, quota: quota, notifying: extra)
        for try await (fits, _, _) in try await connection.execute(finish, logger: logger) where !fits {
            throw CloudError.quotaExceeded
        }
    }

    /// Counts `growth` bytes against the owner's quota; over it, the whole transaction fails
    /// with `CloudError.quotaExceeded` and nothing it wrote stays.
    static func useBytes(_ growth: Int64, of owner: String, quota: Int64?, on connection: PostgresConnection, logger: Logger) async throws {
        guard growth != 0 else { return }
        for try await fits in try await connection.query(
            "SELECT strata_cloud.use_bytes(\(owner), \(growth), \(quota))", logger: logger
        ).decode(Bool.self) where !fits {
            throw CloudError.quotaExceeded
        }
    }

    /// Gives the records under `name` (up to nested shares) the shared root `root` and new
    /// positions after `position`, so feeds that now see them receive them; returns the last
    /// position used.
    static func moveSubtree(
        of name: String, in zone: CloudZoneID, to root: String?, after position: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> Int64 {
        var moved: Int64 = 0
        for try await count in try await connection.query(
            """
            WITH members AS (
                SELECT s.name, row_number() OVER (ORDER BY s.name) AS offset_in_move
                FROM strata_cloud.share_subtree(\(zone.owner), \(zone.name), \(name)) s),
            updated AS (
                UPDATE strata_cloud.records r SET share_root = \(root), sequence = \(position) + m.offset_in_move
                FROM members m WHERE r.owner = \(zone.owner) AND r.zone = \(zone.name) AND r.name = m.name
                RETURNING 1)
            SELECT count(*) FROM updated
            """,
            logger: logger
        ).decode(Int64.self) {
            moved = count
        }
        return position + moved
    }

    /// Writes saved records, and forgets the tombstones of names saved again, with one
    /// statement (arrays unnested server-side): one round trip per request. With
    /// `zonePosition`, the same statement moves the zone's position there; returns whether it
    /// did (not when there is nothing to write).
    private static func write(
        _ records: [(record: CloudRecord, shareRoot: String?, position: Int64)], in zone: CloudZoneID, movingZoneTo zonePosition: Int64?,
        on connection: PostgresConnection, logger: Logger
    ) async throws -> Bool {
        guard !records.isEmpty else { return false }
        // A request naming one record twice keeps the last save, as one statement may touch a
        // row once.
        var last = ExactKeyed<Int>()
        for (index, entry) in records.enumerated() { last[entry.record.id.name] = index }
        let records = records.enumerated().filter { last[$0.element.record.id.name] == $0.offset }.map(\.element)
        var statement = PreparedStatements.WriteRecords(owner: zone.owner, zone: zone.name, zonePosition: zonePosition)
        for (record, shareRoot, position) in records {
            statement.names.append(record.id.name)
            statement.types.append(record.type)
            statement.fields.append(RecordCoding.encodeFields(record.fields))
            statement.versions.append(RecordCoding.encodeVersions(record.fieldVersions))
            statement.parents.append(record.parent?.name ?? "")
            statement.hasParent.append(record.parent != nil)
            statement.tags.append(record.changeTag ?? "")
            statement.positions.append(position)
            statement.sizes.append(Int64(record.encodedSize))
            statement.roots.append(shareRoot ?? "")
            statement.hasRoot.append(shareRoot != nil)
        }
        var moved = false
        for try await (_, _, zonesMoved) in try await connection.execute(statement, logger: logger) { moved = zonesMoved == 1 }
        return moved
    }
}
