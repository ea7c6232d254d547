import Logging
import PostgresNIO
import StrataCloud

/// The change feeds: which zones of a database changed, and a zone's changes page by page.
extension CloudStoreDatabase {
    /// The zones that changed or were deleted since `token`. The private database's token is a
    /// position in the user's own database feed; the shared database's lists the position of
    /// each shared zone it has seen, so a zone whose position moved is changed and a zone no
    /// longer reachable (unshared, left, deleted) is reported deleted.
    public func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        try await fetchDatabaseChanges(since: token, firstPages: [])
    }

    /// The zones that changed since `token`, and the first page of each of `firstPages`' zones
    /// among them, in one `REPEATABLE READ` transaction: the pages and the list are one moment
    /// of the database.
    public func fetchDatabaseChanges(
        since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]
    ) async throws -> CloudDatabaseChanges {
        guard firstPages.count <= CloudZonePageRequest.maximumPerRequest else { throw CloudError.limitExceeded }
        let (user, logger, scope) = (user, logger, scope)
        let reaches = reaches
        let sharedSeen = scope == .shared ? try SharedDatabaseToken(token) : nil
        let start = scope == .private ? try Self.position(of: token, prefix: "d") : 0
        // The pages' records are read into values after the transaction: that work is the
        // page's size, and the transaction runs on its connection's event loop.
        var (changes, reads) = try await store.transaction(as: user, repeatableRead: true) { connection in
            let changes =
                if let sharedSeen {
                    try await Self.sharedDatabaseChanges(of: user, seen: sharedSeen, on: connection, logger: logger)
                } else {
                    try await Self.privateDatabaseChanges(of: user, after: start, on: connection, logger: logger)
                }
            let changed = Set(changes.changedZones)
            var asked = Set<CloudZoneID>()
            var reads: [(CloudZoneID, ZonePageRead)] = []
            // A zone asked for twice is read from its first request only, given or not.
            for request in firstPages where asked.insert(request.zone).inserted && changed.contains(request.zone) {
                guard reaches(request.zone), let issued = try? ZoneFeedToken(request.since) else { continue }
                // A page the store cannot give (an expired token, a zone gone) is left out: the
                // caller meets its error when it fetches the zone. Those refusals are Swift's
                // checks of what a statement returned, not a failed statement, so the
                // transaction goes on.
                do {
                    reads.append(
                        (
                            request.zone,
                            try await Self.readZonePage(
                                request.zone, since: request.since, issued: issued, limit: request.limit,
                                plannedPages: request.boundedPlannedPages, user: user, scope: scope, on: connection, logger: logger)
                        ))
                } catch let error as CloudError where !error.isTransient {
                    continue
                }
            }
            return (changes, reads)
        }
        for (zone, read) in reads {
            do {
                changes.firstPages[zone] = try Self.zonePage(zone, read: read)
            } catch let error as CloudError where !error.isTransient {
                continue
            }
        }
        return changes
    }

    private static func privateDatabaseChanges(
        of user: String, after start: Int64, on connection: PostgresConnection, logger: Logger
    ) async throws -> CloudDatabaseChanges {
        var end: Int64 = 0
        var changed: [CloudZoneID] = []
        var deleted: [CloudZoneID] = []
        // The feed's end and the zones past the token in one round trip (the push path pays
        // every one): one row without a zone when none changed.
        let rows = try await connection.execute(PreparedStatements.PrivateDatabaseChanges(user: user, start: start), logger: logger)
        for try await (position, zoneName, isDeleted) in rows {
            end = position
            guard let name = zoneName else { continue }
            if isDeleted == true {
                deleted.append(CloudZoneID(name: name, owner: user))
            } else {
                changed.append(CloudZoneID(name: name, owner: user))
            }
        }
        return CloudDatabaseChanges(changedZones: changed, deletedZones: deleted, token: CloudChangeToken("d:\(max(start, end))"))
    }

    private static func sharedDatabaseChanges(
        of user: String, seen: SharedDatabaseToken, on connection: PostgresConnection, logger: Logger
    ) async throws -> CloudDatabaseChanges {
        var now: [CloudZoneID: Int64] = [:]
        let rows = try await connection.query(
            """
            SELECT z.owner, z.name, z.sequence FROM strata_cloud.zones z
            WHERE NOT z.deleted AND z.owner <> \(user)
                AND (z.owner, z.name) IN (SELECT owner, zone FROM strata_cloud.readable_shares())
            """,
            logger: logger)
        for try await (owner, name, sequence) in rows.decode((String, String, Int64).self) {
            now[CloudZoneID(name: name, owner: owner)] = sequence
        }
        let order: (CloudZoneID, CloudZoneID) -> Bool = { $0.description < $1.description }
        let changed = now.filter { seen.positions[$0.key] != $0.value }.map(\.key).sorted(by: order)
        let deleted = seen.positions.keys.filter { now[$0] == nil }.sorted(by: order)
        return CloudDatabaseChanges(changedZones: changed, deletedZones: deleted, token: try SharedDatabaseToken(positions: now).token)
    }

    /// What changed in `zone` since `token`, oldest first, at most `limit` saves and deletions
    /// per page; `CloudError.changeTokenExpired` for a token from before the
    /// zone's tombstones were purged.
    ///
    /// Through the shared database, row-level security leaves only the shared records, the
    /// deletions the user could see, and the records that left their view (departures). A
    /// token issued before the user last gained access starts the zone over, as records
    /// already in it became visible.
    public func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        try Self.zonePage(zone, read: try await readZonePage(zone, since: token, limit: limit, plannedPages: 0))
    }

    /// The same page as ``fetchZoneChanges(_:since:limit:)``, read whole, with the starts of up
    /// to `plannedPages` pages after the next one (in the private database).
    public func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        let read = try await readZonePage(zone, since: token, limit: limit, plannedPages: plannedPages)
        return ArrivingZoneChanges(try Self.zonePage(zone, read: read))
    }

    /// A page of `zone` as rows, in a `REPEATABLE READ` transaction of its own, its records
    /// read into values (or written out) by the caller, after the transaction and off its
    /// connection's event loop: that is the page's size of work.
    private func readZonePage(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws -> ZonePageRead {
        guard reaches(zone) else { throw CloudError.permissionFailure(nil) }
        let issued = try ZoneFeedToken(token)
        let (user, logger, scope) = (user, logger, scope)
        let planned = CloudZonePageRequest.bounded(plannedPages: plannedPages)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            try await Self.readZonePage(
                zone, since: token, issued: issued, limit: limit, plannedPages: planned, user: user, scope: scope, on: connection,
                logger: logger)
        }
    }

    /// The same page as ``fetchZoneChanges(_:since:limit:)``, its records written as JSON from
    /// the texts PostgreSQL returns, without reading them into values: what the service sends.
    package func fetchEncodedZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> EncodedZoneChanges
    {
        let read = try await readZonePage(zone, since: token, limit: limit, plannedPages: plannedPages)
        var changed = JSONWriter(capacity: read.rows.count * 900)
        var changedCount = 0
        var deleted: [CloudTombstone] = []
        for row in read.rows {
            if let fields = row.3, let versions = row.4, let tag = row.6 {
                if changedCount > 0 { changed.byte(",") }
                try RecordCoding.writeRecord(
                    zone: zone, name: row.1, type: row.2, fields: fields, versions: versions, parent: row.5, changeTag: tag,
                    to: &changed)
                changedCount += 1
            } else {
                deleted.append(CloudTombstone(id: CloudRecordID(name: row.1, zone: zone), type: row.2))
            }
        }
        return EncodedZoneChanges(
            changed: changed.bytes, changedCount: changedCount, deleted: deleted, token: read.token, moreComing: read.moreComing,
            remainingEstimate: read.remainingEstimate, followingTokens: read.followingTokens)
    }

    /// A page of `zone`'s changes, its records read into values from the rows `read` holds.
    private static func zonePage(_ zone: CloudZoneID, read: ZonePageRead) throws -> CloudZoneChanges {
        var page = CloudZoneChanges(
            changed: [], deleted: [], token: read.token, moreComing: read.moreComing, remainingEstimate: read.remainingEstimate,
            followingTokens: read.followingTokens)
        for row in read.rows {
            if let fields = row.3, let versions = row.4, let tag = row.6 {
                page.changed.append(
                    try RecordCoding.record(
                        zone: zone, name: row.1, type: row.2, fields: fields, versions: versions, parent: row.5, changeTag: tag))
            } else {
                page.deleted.append(CloudTombstone(id: CloudRecordID(name: row.1, zone: zone), type: row.2))
            }
        }
        return page
    }

    /// A page's rows, as PostgreSQL returns them, and where the next page starts.
    private struct ZonePageRead: Sendable {
        var rows: ArraySlice<PreparedStatements.ZonePageRow>
        var token: CloudChangeToken
        var moreComing: Bool
        var remainingEstimate: Int
        var followingTokens: [CloudChangeToken] = []
    }

    /// A page of `zone`'s changes after `token` (`issued`, decoded), as rows, in the caller's
    /// transaction. Its refusals (`zoneNotFound`, `permissionFailure`, `changeTokenExpired`)
    /// are thrown by checks of what the zone's row holds, never by a failed statement.
    ///
    /// - Parameter plannedPages: how many starts of pages after the next one to plan, in the
    ///   private database (``CloudZoneChanges/followingTokens``), bounded already.
    private static func readZonePage(
        _ zone: CloudZoneID, since token: CloudChangeToken?, issued: ZoneFeedToken, limit: Int, plannedPages: Int, user: String,
        scope: CloudDatabaseScope, on connection: PostgresConnection, logger: Logger
    ) async throws -> ZonePageRead {
        let (start, tokenAccess) = (issued.position, issued.access)
        // Bounded before any arithmetic: a limit of Int.max must not overflow `pageSize + 1`.
        let pageSize = min(max(1, limit), CloudStore.maximumPageSize)
        var zoneState: (sequence: Int64, horizon: Int64)?
        for try await (sequence, horizon, _) in try await connection.execute(
            PreparedStatements.ZoneState(owner: zone.owner, zone: zone.name), logger: logger)
        {
            zoneState = (sequence, horizon)
        }
        guard let zoneState else {
            throw scope == .private ? CloudError.zoneNotFound(zone) : CloudError.permissionFailure(nil)
        }
        // A token ahead of the zone comes from a database restored to an earlier point:
        // changes after it would be skipped, so the device starts the zone over.
        if token != nil && (issued.hasExpired(zoneHorizon: zoneState.horizon) || start > max(zoneState.sequence, zoneState.horizon)) {
            throw CloudError.changeTokenExpired
        }
        var access: Int64 = 0
        if scope == .shared {
            for try await latest in try await connection.query(
                """
                SELECT coalesce(max(access_changed), 0) FROM strata_cloud.share_participants
                WHERE owner = \(zone.owner) AND zone = \(zone.name) AND participant = \(user) AND acceptance = 'accepted'
                """,
                logger: logger
            ).decode(Int64.self) {
                access = latest
            }
        }
        let since = tokenAccess < access ? 0 : start
        let bounds = PreparedStatements.ZonePageBounds(
            owner: zone.owner, zone: zone.name, recordsAfter: since, tombstonesAfter: start, limit: Int64(pageSize) + 1)
        let rows =
            scope == .private
            ? try await connection.rows(of: PreparedStatements.OwnZonePage(bounds: bounds), logger: logger)
            : try await connection.rows(of: PreparedStatements.SharedZonePage(bounds: bounds), logger: logger)
        let moreComing = rows.count > pageSize
        let pageRows = rows.prefix(pageSize)
        let last = pageRows.last?.0 ?? start
        let end = moreComing ? last : max(start, zoneState.sequence, zoneState.horizon)
        // The pages after the next one start where the feed, read on past this page in the
        // same snapshot, reaches each further `pageSize` changes. A change made later moves to
        // the feed's end: it can only make a page reach past the next one's start, never
        // leave a change between them.
        var following: [CloudChangeToken] = []
        if scope == .private && moreComing && plannedPages > 0 {
            let plan = PreparedStatements.PlannedPageStarts(
                owner: zone.owner, zone: zone.name, after: last, pageSize: Int64(pageSize), pages: Int64(plannedPages))
            var positions: [Int64] = []
            for try await position in try await connection.execute(plan, logger: logger) { positions.append(position) }
            following = positions.sorted().map { ZoneFeedToken(position: $0, access: access, horizon: zoneState.horizon).token }
        }
        // Every change after the page holds a position of its own between the page's last
        // and the zone's: an upper bound in O(1), where counting would cost a scan per page.
        return ZonePageRead(
            rows: pageRows, token: ZoneFeedToken(position: end, access: access, horizon: zoneState.horizon).token,
            moreComing: moreComing, remainingEstimate: moreComing ? Int(clamping: max(1, zoneState.sequence - last)) : 0,
            followingTokens: following)
    }
}

extension CloudStoreDatabase: EncodedZonePageSource {}
