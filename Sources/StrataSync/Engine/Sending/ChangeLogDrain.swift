import StrataSQLite

/// Moves logged local changes into the records' metadata, where sends pick them up.
///
/// Two transactions, in this order, so a crash between them loses nothing: the first records
/// the changes in the metadatabase together with how far it got (``EngineState/drainedThrough``);
/// the second deletes those entries from the log in the user's file. After a crash between
/// them the entries are still in the log but at or below the mark, and the next drain deletes
/// them without applying them twice. The entry at the mark itself stays in the log, so SQLite
/// never numbers a new entry at or below the mark.
enum ChangeLogDrain {
    /// How many log entries one transaction drains.
    static let batchSize = 5_000

    /// Drains one batch; returns whether entries were drained.
    ///
    /// - Parameters:
    ///   - policies: the merge policies: edits of counter columns go to this device's lane
    ///     (``CounterStore/recordLocalEdits(_:metadata:schema:clock:in:)``), with versions from
    ///     `clock`; without a clock, counters are not looked at.
    ///   - limit: how many entries at most, or with `wholeTransactions`, about how many.
    ///   - wholeTransactions: the batch ends where a local transaction ends: it takes the rest
    ///     of its last entry's transaction, up to `limit` more entries. A transaction longer
    ///     than that is cut: only a send drains so, and such a transaction goes to the cloud
    ///     in pieces anyway (``DrainWhileSending``).
    static func drainBatch(
        in db: Database, schema: SyncSchema, zone: CloudZoneID, node: String, policies: ColumnPolicies = ColumnPolicies(),
        clock: HybridLogicalClock? = nil, limit: Int = batchSize, wholeTransactions: Bool = false
    ) throws -> Bool {
        let drained = try drainedThrough(in: db)
        var entries = try ChangeLog.entries(in: db, node: node, after: drained, limit: limit)
        guard var last = entries.last else { return false }
        if wholeTransactions && entries.count == limit {
            // A transaction's entries are consecutive: SQLite has one writer at a time.
            let rest = try ChangeLog.entries(in: db, node: node, after: last.sequence, limit: limit)
            entries += rest.prefix { $0.transaction == last.transaction }
            if let end = entries.last { last = end }
        }
        // Entries from other processes carry their own clocks' versions: what this engine
        // stamps next (counter lanes, its own changes) orders after them.
        if let clock, let newest = entries.lazy.map(\.version).max() { clock.observeLogged(newest) }
        var touched: [RecordName: RecordMetadata] = [:]
        touched.reserveCapacity(entries.count)
        var counterEdits: [RecordName: [String: HybridTimestamp]] = [:]
        // An insert logs no column list: it set every column the table has now, which may be
        // more than this engine knew when it started (a migration in another process added
        // one). Read once per table and batch.
        var liveColumns: [String: [String]] = [:]
        func allColumns(of table: SyncedTable) -> [String] {
            if let known = liveColumns[table.name] { return known }
            let columns = (try? SyncedTable.read(table.name, in: db).valueColumns) ?? table.valueColumns
            liveColumns[table.name] = columns
            return columns
        }
        // The batch's stored metadata in one statement, not one per entry.
        let stored = try RecordMetadata.fetchAll(
            Set(
                entries.lazy.filter { schema.table(named: $0.tableName) != nil }.map {
                    RecordName(table: $0.tableName, primaryKey: $0.primaryKey)
                }),
            in: db)
        for entry in entries {
            guard let table = schema.table(named: entry.tableName) else { continue }
            let name = RecordName(table: entry.tableName, primaryKey: entry.primaryKey)
            var metadata: RecordMetadata
            if let known = touched[name] {
                metadata = known
            } else if let stored = stored[name] {
                metadata = stored
            } else {
                let recordZone =
                    entry.operation == .save
                    ? try SyncEngine.zoneForNewRecord(name, table: table, default: zone, touched: touched, in: db)
                    : zone
                metadata = RecordMetadata(name: name, zone: recordZone)
                metadata.fieldVersions.reserveCapacity(table.columns.count)
            }
            switch entry.operation {
            case .save:
                for column in entry.changedColumns ?? allColumns(of: table) {
                    if let known = metadata.fieldVersions[column], known >= entry.version { continue }
                    metadata.fieldVersions[column] = entry.version
                }
                if clock != nil {
                    for column in policies.counterColumns(of: table.name) where entry.changedColumns?.contains(column) ?? true {
                        let earliest = counterEdits[name]?[column].map { min($0, entry.version) } ?? entry.version
                        counterEdits[name, default: [:]][column] = earliest
                    }
                }
                metadata.pendingOperation = .save
            case .delete:
                metadata.pendingOperation = .delete
            }
            metadata.pendingRevision += 1
            metadata.pendingTransaction = entry.transaction
            metadata.userModificationTime = entry.version
            touched[name] = metadata
        }
        if let clock {
            try CounterStore.recordLocalEdits(counterEdits, metadata: touched, schema: schema, clock: clock, in: db)
        }
        // Written in the order sends read them back (``RecordMetadata/fetchPending``): new rows
        // take rowids in that order, so a batch's answers update neighbouring rows on a few
        // pages, where the dictionary's order scattered them over every page of the table
        // (upload 1.3 → 1.5 s at 20,000 rows, the pages rebalanced as each row grew).
        // Positions are sorted, not the rows: a row is a large value, and sorting moved each
        // one about log2(n) times (a fifth of a drain's time).
        let rows = Array(touched.values)
        let order = rows.indices.sorted { left, right in
            let (leftTransaction, rightTransaction) = (rows[left].pendingTransaction ?? .min, rows[right].pendingTransaction ?? .min)
            if leftTransaction != rightTransaction { return leftTransaction < rightTransaction }
            let (leftName, rightName) = (rows[left].name, rows[right].name)
            if !leftName.table.hasSameBytes(as: rightName.table) { return leftName.table.bytesPrecede(rightName.table) }
            return leftName.primaryKey.bytesPrecede(rightName.primaryKey)
        }
        for index in order { try rows[index].save(in: db) }
        try EngineState.set(EngineState.drainedThrough, to: String(last.sequence), in: db)
        return true
    }

    /// Drains every entry, in the caller's transaction: applying incoming changes and the
    /// cloud's answers must see every local edit committed before, or an older incoming value
    /// could win over an edit still in the log.
    static func drainAll(
        in db: Database, schema: SyncSchema, zone: CloudZoneID, node: String, policies: ColumnPolicies = ColumnPolicies(),
        clock: HybridLogicalClock? = nil
    ) throws {
        while try drainBatch(in: db, schema: schema, zone: zone, node: node, policies: policies, clock: clock) {}
    }

    /// Deletes the log entries the metadatabase already holds, but the last (see `ChangeLog`).
    static func removeDrained(in db: Database) throws {
        try ChangeLog.removeEntries(before: drainedThrough(in: db), in: db)
    }

    /// Whether the log holds entries not drained yet.
    static func hasUndrained(in db: Database) throws -> Bool {
        try ChangeLog.lastSequence(in: db) > drainedThrough(in: db)
    }

    /// The log entries not drained yet.
    static func undrainedCount(in db: Database) throws -> Int {
        try Int.fetchOne(
            db, sql: "SELECT count(*) FROM main.\(ChangeLog.tableName) WHERE sequence > ?", arguments: [drainedThrough(in: db)]) ?? 0
    }

    /// How many records the undrained entries change that do not wait to be sent already:
    /// each record once, however many entries name it, and not when its metadata is pending
    /// (an edit of a record a failed send left pending). Entries of tables `schema` does not
    /// sync are left out, as the drain leaves them. What ``SyncEngine/pendingCount()`` adds
    /// to the pending metadata.
    static func undrainedRecordsNotPending(in db: Database, schema: SyncSchema) throws -> Int {
        var tables = JSONWriter(capacity: schema.tables.count * 24)
        tables.array(schema.tables) { writer, table in writer.string(table.name) }
        return try Int.fetchOne(
            db,
            sql: """
                SELECT count(*) FROM (
                    SELECT DISTINCT tableName, primaryKey FROM main.\(ChangeLog.tableName)
                    WHERE sequence > ? AND tableName IN (SELECT value FROM json_each(?))
                ) AS entry
                WHERE NOT EXISTS (
                    SELECT 1 FROM \(MetadatabaseTable.metadata.qualifiedName) AS metadata
                    WHERE metadata.recordType = entry.tableName AND metadata.recordPrimaryKey = entry.primaryKey
                        AND metadata.pendingOperation IS NOT NULL)
                """,
            arguments: [drainedThrough(in: db), tables.text]) ?? 0
    }

    /// How far the metadatabase has drained the log.
    static func drainedThrough(in db: Database) throws -> Int64 {
        Int64(try EngineState.value(EngineState.drainedThrough, in: db) ?? "0") ?? 0
    }

    /// Forgets how far the log was drained when the log does not reach that far: the two files
    /// do not belong together (the user's file was restored from a backup, or copied without
    /// its metadatabase), and new entries would reuse drained numbers and be skipped. Draining
    /// everything again is safe, as draining is idempotent.
    static func reconcileMark(in db: Database) throws {
        let drained = try drainedThrough(in: db)
        if drained > 0, try ChangeLog.lastSequence(in: db) < drained {
            try EngineState.set(EngineState.drainedThrough, to: "0", in: db)
        }
    }
}
