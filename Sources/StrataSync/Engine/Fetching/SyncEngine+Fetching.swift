import StrataSQLite

extension SyncEngine {
    /// Fetches what changed in the cloud since the last fetch and merges it into the local
    /// tables, a page at a time; each page's change token is saved once the page is applied.
    public func fetchChanges() async throws {
        try await work.run { try await self.performFetch() }
    }

    func performFetch() async throws {
        updateStatus { $0.isFetchingChanges = true }
        do {
            try await performFetchBody()
            let (pending, quarantined) = try await readOnWriter { db in
                (
                    try RecordMetadata.pendingCount(in: db),
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM \(MetadatabaseTable.quarantinedRecords.qualifiedName)") ?? 0
                )
            }
            updateStatus {
                $0.isFetchingChanges = false
                $0.pendingCount = pending
                $0.quarantinedCount = quarantined
                $0.lastError = nil
            }
        } catch is CancellationError {
            logger.notice("fetching cancelled")
            updateStatus { $0.isFetchingChanges = false }
            throw CancellationError()
        } catch {
            logger.error("fetching failed: \(error)")
            updateStatus {
                $0.isFetchingChanges = false; $0.lastError = error
            }
            throw error
        }
    }

    func performFetchBody() async throws {
        defer { finishFetchProgress() }
        let user = try await availableUser()
        // The two databases' lists are asked for at once, the private one with its zone's
        // first page: a push's fetch waits for one round trip, not two or three in turn (issue
        // #27). Zones are still applied private first; the shared list is only older, and its
        // token goes with it.
        async let sharedChanges = databaseChanges(.shared)
        let privateChanges = try await databaseChanges(.private, withFirstPageOf: defaultZone(for: user))
        // The tokens of both databases, and of their zones' last pages, are saved in one
        // transaction at the end: a push's fetch wrote four (its page, its zone's token, each
        // database's token), an fsync each (issue #27). A token saved later than its changes
        // only makes a crash fetch them again, which changes nothing.
        var tokens = StateWrites()
        do {
            try await fetchDatabase(.private, user: user, changes: privateChanges, tokens: &tokens)
            try await fetchDatabase(.shared, user: user, changes: try await sharedChanges, tokens: &tokens)
        } catch {
            // What was fetched before the failure stays fetched.
            try await tokens.save(in: database)
            throw error
        }
        try await tokens.save(in: database)
        try await sealKeysForNewReaders(user: user)
    }

    /// Engine state values to set together, in one transaction, in the order given.
    struct StateWrites: Sendable {
        private(set) var values: [(key: String, value: String?)] = []

        mutating func set(_ key: String, to value: String?) { values.append((key, value)) }

        func save(in database: any DatabaseWriter) async throws {
            guard !values.isEmpty else { return }
            let values = self.values
            try await database.write { db in
                for (key, value) in values { try EngineState.set(key, to: value, in: db) }
            }
        }
    }

    /// Fetches the zones of one database that changed since its token: the user's own zones
    /// (private), or other users' zones holding records shared with this user (shared). A zone
    /// deleted, or no longer shared with the user (left, removed, share ended), goes from this
    /// device.
    ///
    /// - Parameter tokens: where the tokens to save go (``StateWrites``): the database's, and
    ///   each fetched zone's last one.
    private func fetchDatabase(_ scope: CloudDatabaseScope, user: String, changes: DatabaseChanges, tokens: inout StateWrites) async throws
    {
        let (changes, resyncing, firstPages) = (changes.changes, changes.resyncing, changes.firstPages)
        let cloud = scope == .private ? self.cloud.privateDatabase : self.cloud.sharedDatabase
        let ownsZone: (CloudZoneID) -> Bool = { scope == .private ? $0.owner == user : $0.owner != user }
        let databaseKey = EngineState.databaseToken(scope)
        let resyncKey = EngineState.resyncing(scope)
        for zone in changes.deletedZones where ownsZone(zone) {
            if resyncing {
                logger.notice("zone \(zone) is gone from the cloud: resynchronizing, its local rows stay and are sent again")
                continue
            }
            try await deleteLocalRecords(in: zone)
        }
        // A zone whose key has not reached this device yet (a share whose owner has not sealed
        // it to this user) waits; the other zones are fetched meanwhile. The database token is
        // then kept, so the waiting zone is listed again next time.
        var waiting: (any Error)?
        for zone in changes.changedZones where ownsZone(zone) {
            do {
                let last = try await fetchZone(zone, cloud: cloud, localZone: defaultZone(for: user), firstPage: firstPages[zone])
                tokens.set(last.key, to: last.value)
            } catch let error as EncryptionError {
                guard case .missingZoneKey = error, scope == .shared else { throw error }
                logger.notice("zone \(zone) waits for its key: \(error)")
                waiting = waiting ?? error
                continue
            }
            try await refreshShares(in: zone, cloud: cloud, user: user)
        }
        if let waiting { throw waiting }
        tokens.set(databaseKey, to: changes.token.value)
        tokens.set(resyncKey, to: nil)
    }

    /// What changed in one database, and whether it is being synced again from scratch.
    private struct DatabaseChanges: Sendable {
        var changes: CloudDatabaseChanges
        var resyncing: Bool
        /// The first pages that came with the list, each with the zone token it was asked from.
        var firstPages: [CloudZoneID: FirstPage] = [:]
    }

    /// A zone's first page that came with its database's changes.
    struct FirstPage: Sendable {
        /// The zone token the page was asked from.
        var since: CloudChangeToken?
        var page: CloudZoneChanges
    }

    /// The zones of one database that changed since its token (all of them after the token
    /// expired). The token and the resync mark are read in one access: the engine's work is
    /// serial, so neither changes before the database's zones are fetched.
    ///
    /// With `zone`, its first page comes with the list when it changed: the push path's fetch
    /// makes one request where it made two, one after the other.
    private func databaseChanges(_ scope: CloudDatabaseScope, withFirstPageOf zone: CloudZoneID? = nil) async throws -> DatabaseChanges {
        let cloud = scope == .private ? self.cloud.privateDatabase : self.cloud.sharedDatabase
        let (databaseKey, resyncKey) = (EngineState.databaseToken(scope), EngineState.resyncing(scope))
        let zoneKey = zone.map(EngineState.zoneToken)
        let (token, resyncing, zoneToken) = try await readOnWriter { db in
            (
                try EngineState.value(databaseKey, in: db).map(CloudChangeToken.init), try EngineState.value(resyncKey, in: db) != nil,
                try zoneKey.flatMap { try EngineState.value($0, in: db) }.map(CloudChangeToken.init)
            )
        }
        let requests =
            zone.map {
                [
                    CloudZonePageRequest(
                        zone: $0, since: zoneToken, limit: configuration.fetchPageSize,
                        plannedPages: PagesAhead<FetchedPage>.plannedPages)
                ]
            } ?? []
        let changes: CloudDatabaseChanges
        do {
            changes = try await cloud.fetchDatabaseChanges(since: token, firstPages: requests)
        } catch CloudError.changeTokenExpired {
            changes = try await cloud.fetchDatabaseChanges(since: nil, firstPages: requests)
        }
        var result = DatabaseChanges(changes: changes, resyncing: resyncing)
        for request in requests {
            guard let page = changes.firstPages[request.zone] else { continue }
            result.firstPages[request.zone] = FirstPage(since: request.since, page: page)
        }
        return result
    }

    /// How many times one fetch starts a zone over after its token expired before it gives up
    /// (``SyncEngineError/fetchStalled(zone:reason:)``).
    static let maximumZoneRestarts = 3

    /// Fetches one zone's changes, a page at a time; returns its last page's token, which the
    /// caller saves (each page before it is saved once applied).
    private func fetchZone(
        _ zone: CloudZoneID, cloud: any CloudDatabase, localZone: CloudZoneID, firstPage: FirstPage? = nil
    ) async throws -> (key: String, value: String) {
        let zoneKey = EngineState.zoneToken(zone)
        let schema = self.schema
        // What records waiting for a parent still need (their large values) is read with the
        // zone's token, and again with each page's token: only applying a page changes it, and
        // the engine's work is serial. One access per page fewer, the push path's included.
        var (token, waitingNeeds) = try await readOnWriter { db in
            (
                try EngineState.value(zoneKey, in: db).map(CloudChangeToken.init),
                try IncomingChanges.contentMissingForWaitingRecords(in: zone, schema: schema, db: db)
            )
        }
        var incoming = incomingChanges()
        incoming.currentUser = localZone.owner
        // After an expired token the zone is fetched whole; records the cloud no longer has
        // were deleted while their tombstones were forgotten, and go here too.
        var refetchedNames: ExactNames?
        let pageSize = configuration.fetchPageSize
        // Pages are asked for ahead of the one being applied, two at most (``PagesAhead``):
        // the next page is asked for as soon as the one before it arrives, before its records
        // are read, so the cloud, the reading and SQLite each work on a page of their own. A
        // long fetch waits for the slowest of the three, not for two of them in turn. Only the
        // page's token decides what comes next, and it is saved after the page is applied, as
        // before: a crash still re-applies at most one page.
        var restarts = 0
        var ahead = PagesAhead(zone: zone, cloud: cloud, pageSize: pageSize)
        // The tokens this pass asked from or was given with more coming, since the zone's fetch
        // (re)started: the zone's token first.
        var tokensGiven: Set<CloudChangeToken> = token.map { [$0] } ?? []
        var reading: Task<(CloudZoneChanges, EncodedRecords), any Error>?
        defer {
            ahead.cancelAll()
            reading?.cancel()
        }
        // A first page that came with the database's changes stands for the first request,
        // when it was asked from the token the zone still has (the engine's work is serial,
        // so it has; the check keeps a page from ever landing on another token).
        if let firstPage, firstPage.since == token {
            ahead.start(with: FetchedPage(ArrivingZoneChanges(firstPage.page)))
        }
        while true {
            let taken: FetchedPage?
            do {
                taken = try await ahead.next(since: token)
            } catch CloudError.changeTokenExpired where token != nil {
                ahead.cancelAll()
                restarts += 1
                guard restarts <= Self.maximumZoneRestarts else {
                    throw SyncEngineError.fetchStalled(
                        zone: zone,
                        reason: "its change token expired \(restarts) times during one fetch (tombstones purged again and again)")
                }
                logger.notice("the change token of zone \(zone) expired: fetching the zone from scratch")
                token = nil
                refetchedNames = []
                tokensGiven = []
                continue
            }
            // The loop ends at a page with no more coming, before asking for another.
            guard let arrived = taken else {
                throw SyncEngineError.fetchStalled(zone: zone, reason: "a page was asked for after the last one")
            }
            reading = arrived.reading
            // A page from a planned start is applied only when the page applied before it ended
            // exactly there. Changes saved after the planning move to the feed's end, so the
            // page before can end past the start (their pages overlap), and the two were read
            // at different moments, this one maybe first: applied after the other, its older
            // copy of a change could undo a newer one (a delete, a record made again). The
            // pages ahead are then asked again from the token applied last, one after another
            // until a run can start (an outside review found changes left out when runs were
            // not kept apart, and this shape behind the rows that still differed).
            if let start = arrived.plannedStart, start != token {
                logger.info("zone \(zone) changed where its pages ahead were planned: asking again from the last token applied")
                arrived.reading.cancel()
                reading = nil
                ahead.cancelAll()
                continue
            }
            // A zone's positions only move on: more coming with a token this pass already had
            // (the one it asked from, or one given before: pages going round in a circle)
            // would fetch for ever.
            if arrived.moreComing && !tokensGiven.insert(arrived.token).inserted {
                let seen = arrived.token == token ? "the one asked from" : "given earlier in this fetch"
                throw SyncEngineError.fetchStalled(
                    zone: zone, reason: "the cloud said more changes come but gave the token \(arrived.token) again (\(seen))")
            }
            let (page, encoded) = try await withTaskCancellationHandler {
                try await arrived.reading.value
            } onCancel: {
                arrived.reading.cancel()
            }
            reading = nil
            // The pages ahead were asked for from the token the page arrived with; the one
            // saved is the one its records came with. A cloud whose two differ contradicts
            // itself, and neither can be trusted.
            guard page.token == arrived.token, page.moreComing == arrived.moreComing else {
                throw SyncEngineError.fetchStalled(
                    zone: zone,
                    reason: "a page arrived with the token \(arrived.token) (more coming: \(arrived.moreComing)), "
                        + "and its records with \(page.token) (more coming: \(page.moreComing))")
            }
            refetchedNames?.formUnion(page.changed.map(\.id.name))
            let transfer = AssetTransfer(database: database, cloud: cloud, zone: zone)
            let assets = try await transfer.download(AssetTransfer.references(in: page.changed, assetColumnsOf: schema))
            var pageIncoming = incoming
            pageIncoming.encoded = encoded
            pageIncoming.blobs = try await transfer.downloadBlobs(in: page.changed, schema: schema)
            if !page.changed.isEmpty {
                // Records waiting for a parent may be applied with this page: their large
                // values must be here too.
                for hash in waitingNeeds where pageIncoming.blobs[hash] == nil {
                    pageIncoming.blobs[hash] = try await LargeBlobs.content(of: try await transfer.cloud.fetchAsset(hash))
                }
            }
            let applier = pageIncoming
            let report = try await ChangeCapture.withoutCapture {
                try await self.database.write { db in
                    try ChangeLogDrain.drainAll(
                        in: db, schema: self.schema, zone: localZone, node: self.deviceID, policies: self.columnPolicies,
                        clock: self.clock)
                    // Content first: the rows that refer to it check that it exists.
                    for asset in assets { try db.insertStoredAsset(asset) }
                    let report = try applier.apply(records: page.changed, tombstones: page.deleted, in: db)
                    try self.persistClock(in: db)
                    return report
                }
            }
            // Saved in its own transaction, after the page: SQLite does not commit the two
            // files together, and a page applied twice changes nothing, where a token saved
            // without its page would skip it forever. The last page's goes to the caller.
            let pageToken = page.token.value
            if page.moreComing {
                waitingNeeds = try await database.write { db in
                    try EngineState.set(zoneKey, to: pageToken, in: db)
                    return try IncomingChanges.contentMissingForWaitingRecords(in: zone, schema: schema, db: db)
                }
            }
            recordFetchProgress(page, in: zone, since: token)
            token = page.token
            logFetched(report)
            if !page.moreComing {
                if let refetchedNames { try await deleteRecordsMissing(from: refetchedNames, in: zone) }
                return (zoneKey, pageToken)
            }
        }
    }

    /// Deletes the rows the cloud had (they have a change tag), that wait for nothing, and that
    /// a whole-zone fetch did not return.
    private func deleteRecordsMissing(from names: ExactNames, in zone: CloudZoneID) async throws {
        let incoming = incomingChanges()
        try await ChangeCapture.withoutCapture {
            try await self.database.write { db in
                let known = try String.fetchAll(
                    db,
                    sql: """
                        SELECT recordName FROM \(MetadatabaseTable.metadata.qualifiedName)
                        WHERE zoneName = ? AND ownerName = ? AND serverChangeTag IS NOT NULL AND pendingOperation IS NULL
                        """,
                    arguments: [zone.name, zone.owner])
                var report = IncomingChanges.Report()
                for name in known where !names.contains(name) {
                    try incoming.applyDeletion(CloudRecordID(name: name, zone: zone), in: db, report: &report)
                }
            }
        }
    }

    private func logFetched(_ report: IncomingChanges.Report) {
        var events: [SyncEvent] = []
        func add(_ names: [String], _ action: SyncEvent.Action) {
            for name in names {
                events.append(SyncEvent(action: action, recordType: RecordName(name)?.table ?? "?", recordName: name))
            }
        }
        add(report.saved, .saved)
        add(report.merged, .merged)
        add(report.deleted, .deleted)
        add(report.waitingForParent, .waiting)
        add(report.quarantined, .quarantined)
        logEvents(events, title: "fetched")
    }

    /// A zone deleted in the cloud: its records go here too.
    private func deleteLocalRecords(in zone: CloudZoneID) async throws {
        let schema = self.schema
        try await ChangeCapture.withoutCapture {
            try await self.database.write { db in
                for table in schema.tables.reversed() {
                    try db.execute(
                        sql: """
                            DELETE FROM main.\(table.name.quotedIdentifier) WHERE \(table.primaryKey.quotedIdentifier) IN (
                                SELECT recordPrimaryKey FROM \(MetadatabaseTable.metadata.qualifiedName)
                                WHERE recordType = ? AND zoneName = ? AND ownerName = ?)
                            """,
                        arguments: [table.name, zone.name, zone.owner])
                }
                try db.execute(
                    sql: "DELETE FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE zoneName = ? AND ownerName = ?",
                    arguments: [zone.name, zone.owner])
                try EngineState.set(EngineState.zoneToken(zone), to: nil, in: db)
                try EngineState.set(EngineState.zoneCreated(zone), to: nil, in: db)
            }
        }
    }
}
