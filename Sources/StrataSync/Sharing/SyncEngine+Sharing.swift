import StrataQueries
import StrataSQLite

extension SyncEngine {
    /// The start of the message of the error a write to a record shared read-only with this
    /// user fails with, at once, from a trigger: match it with
    /// `DatabaseError.isWritePermissionError`.
    public static let writePermissionError = "strata_sync.writePermission"

    /// Shares a root record with other users, or updates its share: `configure` sets the
    /// title, public permission and participants (the owner adds and removes participants by
    /// sharing again). Sharing a record a second time returns its existing share, configured.
    ///
    /// ```swift
    /// let shared = try await syncEngine.share(record: game) { share in
    ///     share.title = "Poker night"
    ///     share.participants.append(CloudShare.Participant(user: "blob", permission: .readWrite))
    /// }
    /// // Hand `shared.url` to the participants; their engines call `acceptShare(url:)`.
    /// ```
    ///
    /// - Throws: ``SharingError`` naming the table and the reason (engine stopped, table not
    ///   synced, not a root, private table, record not synced yet, another user's record);
    ///   the cloud's errors.
    @discardableResult
    public func share<Record: PrimaryKeyedTable>(
        record: Record, configure: (inout CloudShare) -> Void = { _ in }
    ) async throws -> SharedRecord {
        try await markedAsEngine {
            let id = try record.encodedSyncMetadataID()
            let user = try await availableUser()
            var metadata = try await shareableMetadata(id)
            if metadata.serverChangeTag == nil && configuration.sendsBeforeSharing {
                try await sendChanges()
                metadata = try await shareableMetadata(id)
            }
            guard metadata.serverChangeTag != nil else {
                throw SharingError.recordNotSynced(table: id.recordType, primaryKey: id.recordPrimaryKey)
            }
            guard metadata.zone.owner == user else {
                throw SharingError.notTheOwner(table: id.recordType, primaryKey: id.recordPrimaryKey, owner: metadata.zone.owner)
            }
            let existing = try await database.write { db in try SyncMetadata.find(id).fetchOne(db)?.share }
            var share = existing ?? CloudShare(rootRecordID: metadata.recordID)
            configure(&share)
            if let existing, !Self.readers(of: existing).isSubset(of: Self.readers(of: share)) {
                // Someone lost access: what is written from now on must be unreadable to them.
                try await rotateKey(of: metadata.recordID.zone, keepingShareOf: metadata.recordID)
            }
            let saved = try await cloud.privateDatabase.saveShare(share)
            try await storeShare(saved, of: id, permission: nil)
            logger.info("shared \(id) with \(saved.participants.count - 1) participant(s)")
            return SharedRecord(share: saved, linkKey: try await keyring?.linkKey(for: metadata.recordID).text)
        }
    }

    /// Ends the share of a root record, for every participant; the record stays.
    ///
    /// - Throws: ``SharingError/recordNotShared(table:primaryKey:)``; the cloud's errors.
    public func unshare<Record: PrimaryKeyedTable>(record: Record) async throws {
        try await markedAsEngine {
            let id = try record.encodedSyncMetadataID()
            let metadata = try await shareableMetadata(id)
            guard try await database.write({ db in try SyncMetadata.find(id).fetchOne(db)?.share }) != nil else {
                throw SharingError.recordNotShared(table: id.recordType, primaryKey: id.recordPrimaryKey)
            }
            try await cloud.privateDatabase.deleteShare(rootRecordID: metadata.recordID)
            try await storeShare(nil, of: id, permission: nil)
            try await rotateKey(of: metadata.recordID.zone, keepingShareOf: metadata.recordID)
        }
    }

    /// Accepts a share another user made (its ``SharedRecord/url``): the root and its
    /// descendants come into this device, and stay in sync from then on.
    ///
    /// - Throws: ``SharingError/invalidShareURL(_:)``; `CloudError.unknownItem(_:)` when the
    ///   share does not exist or is not open to this user.
    @discardableResult
    public func acceptShare(url: String) async throws -> CloudShare {
        try await markedAsEngine {
            guard CloudShare.rootRecordID(fromURL: url) != nil else { throw SharingError.invalidShareURL(url) }
            guard status.isRunning else { throw SharingError.engineNotRunning }
            let share = try await cloud.acceptShare(url: url)
            do {
                try await fetchChanges()
            } catch EncryptionError.missingZoneKey(let zone, _) where zone == share.rootRecordID.zone {
                // Accepted, without the link key: the records come once the owner's next sync
                // seals the zone's keys to this user. Until then fetches throw this error (it is in
                // `status.lastError`); the acceptance itself succeeded.
                logger.notice("accepted the share of \(share.rootRecordID); its records come once the owner seals the keys to this user")
            }
            return share
        }
    }

    /// Accepts a share another user made, from what their ``share(record:configure:)``
    /// returned: the same as ``acceptShare(url:)`` with its URL.
    @discardableResult
    public func acceptShare(_ shared: SharedRecord) async throws -> CloudShare {
        try await acceptShare(url: shared.url)
    }

    /// The readers of a share none of whose keys it carries.
    static func readersWithoutKeys(of share: CloudShare) -> Set<String> {
        let served = Set(share.wrappedKeys.keys.compactMap { Keyring.shareEntry($0)?.1 })
        return readers(of: share).subtracting(served)
    }

    /// The participants other than the owner who may read a share.
    static func readers(of share: CloudShare) -> Set<String> {
        Set(share.participants.filter { $0.user != share.owner && $0.acceptance != .removed && $0.permission > .none }.map(\.user))
    }

    /// The metadata of a record that may be shared: checks the engine and the table.
    private func shareableMetadata(_ id: SyncMetadata.ID) async throws -> RecordMetadata {
        guard status.isRunning else { throw SharingError.engineNotRunning }
        guard let table = schema.table(named: id.recordType) else { throw SharingError.tableNotSynced(id.recordType) }
        guard !privateTableNames.contains(table.name) else { throw SharingError.privateTable(table.name) }
        if let parent = table.referencedTables.first {
            throw SharingError.notARoot(table: table.name, parentTable: parent)
        }
        let name = RecordName(table: id.recordType, primaryKey: id.recordPrimaryKey)
        if let metadata = try await database.write({ db in try RecordMetadata.fetch(name, in: db) }) { return metadata }
        return RecordMetadata(name: name, zone: defaultZone(for: try await availableUser()))
    }

    /// Stores a root's share (nil: not shared) and, for records shared with this user, the
    /// permission they have on the root and every descendant.
    func storeShare(_ share: CloudShare?, of id: SyncMetadata.ID, permission: CloudShare.Permission?) async throws {
        let schema = self.schema
        try await database.write { db in
            try Self.storeShare(share, of: id, permission: permission, in: db)
            try PermissionTriggers.installIfNeeded(on: db, schema: schema)
        }
    }

    static func storeShare(_ share: CloudShare?, of id: SyncMetadata.ID, permission: CloudShare.Permission?, in db: Database) throws {
        try db.execute(
            sql:
                "UPDATE \(MetadatabaseTable.metadata.qualifiedName) SET share = ?, isShared = ? WHERE recordType = ? AND recordPrimaryKey = ?",
            arguments: [try share.map { try SyncJSON.encode($0) }, share != nil, id.recordType, id.recordPrimaryKey])
        try db.execute(
            sql: """
                \(subtreeCTE)
                UPDATE \(MetadatabaseTable.metadata.qualifiedName) SET sharePermission = ?
                WHERE (recordType, recordPrimaryKey) IN (SELECT recordType, recordPrimaryKey FROM subtree)
                """,
            arguments: [id.recordType, id.recordPrimaryKey, permission?.rawValue])
    }

    /// `subtree(recordType, recordPrimaryKey)`: a record (the two first arguments) and every
    /// record under it, through the metadata's parent links.
    static let subtreeCTE = """
        WITH RECURSIVE subtree(recordType, recordPrimaryKey) AS (
            SELECT ?, ?
            UNION
            SELECT m.recordType, m.recordPrimaryKey FROM \(MetadatabaseTable.metadata.qualifiedName) m
            JOIN subtree s ON m.parentRecordType = s.recordType AND m.parentRecordPrimaryKey = s.recordPrimaryKey
        )
        """

    /// The user's shared roots in a zone of theirs (owner, zone): from `metadata_shares`, which
    /// holds only shared records. The unary `+` keeps SQLite from picking `metadata_zone_roots`
    /// instead (every root of the zone), which it cannot tell apart without statistics.
    static let ownSharedRootsSQL = """
        SELECT recordName FROM \(MetadatabaseTable.metadata.qualifiedName)
        WHERE ownerName = ? AND zoneName = ? AND share IS NOT NULL AND +parentRecordType IS NULL AND isShared
        """

    /// The roots of a zone another user shares with this one (owner, zone): from
    /// `metadata_zone_roots`.
    static let rootsSharedWithUserSQL = """
        SELECT recordName FROM \(MetadatabaseTable.metadata.qualifiedName)
        WHERE ownerName = ? AND zoneName = ? AND parentRecordType IS NULL
        """

    /// Refreshes the shares of the roots in `zone` from `cloud`: the owner's own shared roots
    /// (acceptance changes), or the roots another user shared with this one, with the
    /// permission this user has on each root's subtree.
    func refreshShares(in zone: CloudZoneID, cloud: any CloudDatabase, user: String) async throws {
        // Every fetch of a changed zone asks, the push path's included: each query is answered
        // from a partial index (the user's shared roots; the roots of a zone shared with the
        // user), never by reading the metadata of every record of a large zone.
        let sql = zone.owner == user ? Self.ownSharedRootsSQL : Self.rootsSharedWithUserSQL
        let roots = try await readOnWriter { db in
            try String.fetchAll(db, sql: sql, arguments: [zone.owner, zone.name])
        }
        for root in roots {
            guard let name = RecordName(root) else { continue }
            let id = SyncMetadata.ID(recordType: name.table, recordPrimaryKey: name.primaryKey)
            do {
                var share = try await cloud.fetchShare(rootRecordID: CloudRecordID(name: root, zone: zone))
                if zone.owner == user, keyring != nil, Self.readersWithoutKeys(of: share).count > 0 {
                    // Someone joined (a public share) or published a key since the share was
                    // saved: seal them the zone's keys now.
                    share = try await self.cloud.privateDatabase.saveShare(share)
                }
                try await storeShare(share, of: id, permission: zone.owner == user ? nil : share.permission(of: user))
            } catch CloudError.unknownItem {
                try await storeShare(nil, of: id, permission: nil)
            }
        }
    }
}

extension DatabaseError {
    /// Whether the write failed because it changed a record another user shared read-only
    /// with this one (see ``SyncEngine/writePermissionError``).
    public var isWritePermissionError: Bool {
        message.hasPrefix(SyncEngine.writePermissionError)
    }
}
