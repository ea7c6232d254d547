import StrataSQLite

extension SyncEngine {
    /// Sends saves and deletes to the database that holds each record: the user's own zones
    /// through the private database, zones shared by other users through the shared one.
    func modifyRecords(saving saves: [CloudRecord], deleting deletes: [CloudRecordID], user: String) async throws -> CloudModifyResult {
        let ownSaves = saves.filter { $0.id.zone.owner == user }
        let ownDeletes = deletes.filter { $0.zone.owner == user }
        var result = CloudModifyResult()
        if !ownSaves.isEmpty || !ownDeletes.isEmpty {
            result = try await cloud.privateDatabase.modifyRecords(saving: ownSaves, deleting: ownDeletes)
        }
        let sharedSaves = saves.filter { $0.id.zone.owner != user }
        let sharedDeletes = deletes.filter { $0.zone.owner != user }
        if !sharedSaves.isEmpty || !sharedDeletes.isEmpty {
            let shared = try await cloud.sharedDatabase.modifyRecords(saving: sharedSaves, deleting: sharedDeletes)
            result.saveResults.merge(shared.saveResults) { $1 }
            result.deleteResults.merge(shared.deleteResults) { $1 }
        }
        return result
    }

    /// A shared root this participant deleted, and the zone it lives in.
    typealias DeletedSharedRoot = (root: SyncMetadata.ID, zone: CloudZoneID)

    /// The shared roots a participant deleted, which a send leaves instead of deleting: the
    /// share ends for them, and the root's subtree goes from this device without deleting
    /// anything in the cloud (``leaveShares(of:)``).
    static func deletedSharedRoots(user: String, in db: Database) throws -> [DeletedSharedRoot] {
        try db.fetchAll(
            sql: """
                SELECT recordType, recordPrimaryKey, zoneName, ownerName FROM \(MetadatabaseTable.metadata.qualifiedName)
                WHERE pendingOperation = 'delete' AND share IS NOT NULL AND ownerName <> ?
                """,
            arguments: [user]
        ) { row in
            (SyncMetadata.ID(recordType: try row[0], recordPrimaryKey: try row[1]), CloudZoneID(name: try row[2], owner: try row[3]))
        }
    }

    /// Leaves the shares of `roots` (``deletedSharedRoots(user:in:)``), each root's subtree
    /// forgotten on this device once the cloud ended the share for this user.
    func leaveShares(of roots: [DeletedSharedRoot]) async throws {
        for (id, zone) in roots {
            try await cloud.sharedDatabase.deleteShare(rootRecordID: CloudRecordID(name: id.description, zone: zone))
            try await database.write { db in
                try db.execute(
                    sql: """
                        \(Self.subtreeCTE)
                        DELETE FROM \(MetadatabaseTable.metadata.qualifiedName)
                        WHERE (recordType, recordPrimaryKey) IN (SELECT recordType, recordPrimaryKey FROM subtree)
                        """,
                    arguments: [id.recordType, id.recordPrimaryKey])
            }
            logger.info("left the share of \(id), owned by \(zone.owner)")
        }
    }

    /// The zone a new record goes to: its parent's, when the parent lives in a zone shared by
    /// another user (a participant adding a child to a shared record), else `zone`.
    static func zoneForNewRecord(
        _ name: RecordName, table: SyncedTable, default zone: CloudZoneID,
        touched: [RecordName: RecordMetadata], in db: Database
    ) throws -> CloudZoneID {
        guard let reference = table.parent else { return zone }
        // A NULL foreign key (a child without a parent) has no parent's zone: the default one.
        guard
            let sql = table.sql.selectParentKeyText,
            let parentKey = try db.fetchOne(sql: sql, arguments: [name.primaryKey], { row -> String? in try row[0] }) ?? nil
        else { return zone }
        let parentName = RecordName(table: reference.parentTable, primaryKey: parentKey)
        if let parent = touched[parentName] { return parent.zone }
        return try RecordMetadata.zone(of: parentName, in: db) ?? zone
    }
}
