import StrataSQLite
import Synchronization

extension SyncEngine {
    /// Syncs everything again, keeping every local row: for after the cloud lost data (a reset,
    /// a zone deleted by hand, a cloud restored from an older backup) or when this device's
    /// rows and the cloud's are suspected to differ.
    ///
    /// 1. Every change token and created-zone mark is forgotten, so the next fetch reads every
    ///    zone from the start, and a zone the cloud lost is created again. Zones the cloud no
    ///    longer has are not taken for deletions: no local row is deleted.
    /// 2. Every record of the user's own is marked to be sent again, its field versions kept;
    ///    rows this device never recorded (written while capture could not see them) are added
    ///    at version 0, as rows of a table new to sync.
    /// 3. A fetch merges the cloud's copies field by field with the kept versions (the newer
    ///    edit of each field wins, wherever it was made); then a send uploads the merged rows,
    ///    and whatever the cloud lacks.
    ///
    /// Rows deleted on this device stay deleted here; a row the cloud still has that this
    /// device deleted before the call comes back, as any fetch of it would bring it. A row
    /// another device deleted is sent again too, with its fields stamped anew (the cloud
    /// refuses a save no newer than what a delete removed, `supersededByDelete`), until a
    /// send leaves nothing pending. Records
    /// shared with this user by others are fetched again and merged, not uploaded.
    ///
    /// - Throws: what ``fetchChanges()`` and ``sendChanges()`` throw; the marks stay, so calling
    ///   it again (or any later sync) finishes the work.
    public func resynchronize() async throws {
        try await work.run { try await self.markEverythingForResync() }
        logger.notice("resynchronizing: every record is fetched and sent again; no local row is deleted")
        try await fetchChanges()
        try await sendChanges()
    }

    func markEverythingForResync() async throws {
        let user = try await availableUser()
        let zone = defaultZone(for: user)
        try await drainChangeLog(into: zone)
        let schema = self.schema
        try await ChangeCapture.withoutCapture {
            try await self.database.write { db in
                try db.execute(
                    sql: "DELETE FROM \(MetadatabaseTable.state.qualifiedName) WHERE key LIKE 'token.%' OR key LIKE 'zone.%'")
                for scope in [CloudDatabaseScope.private, .shared] {
                    try EngineState.set(EngineState.resyncing(scope), to: "1", in: db)
                }
                try EngineState.set(EngineState.resyncSending, to: "1", in: db)
                try db.execute(
                    sql: """
                        UPDATE \(MetadatabaseTable.metadata.qualifiedName)
                        SET pendingOperation = coalesce(pendingOperation, 'save'), pendingRevision = pendingRevision + 1,
                            pendingTransaction = coalesce(pendingTransaction, 0), serverChangeTag = NULL
                        WHERE ownerName = ?
                        """,
                    arguments: [user])
                for table in schema.tables {
                    let key = table.primaryKey.quotedIdentifier
                    try db.execute(
                        sql: """
                            INSERT INTO main.\(ChangeLog.tableName) (tableName, primaryKey, operation, changedColumns, version, "transaction")
                            SELECT ?, row.\(key), 'save', NULL, 0, 0 FROM main.\(table.name.quotedIdentifier) AS row
                            WHERE NOT EXISTS (
                                SELECT 1 FROM \(MetadatabaseTable.metadata.qualifiedName) AS known
                                WHERE known.recordType = ? AND known.recordPrimaryKey = CAST(row.\(key) AS TEXT))
                            """,
                        arguments: [table.name, table.name])
                }
            }
        }
        try await drainChangeLog(into: zone)
        resyncSendingMayBeSet.store(true, ordering: .releasing)
    }
}
