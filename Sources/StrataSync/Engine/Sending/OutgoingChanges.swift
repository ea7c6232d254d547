import StrataAssets
import StrataSQLite

/// Builds the next batch of local changes to send, and records the cloud's answers.
struct OutgoingChanges {
    let schema: SyncSchema
    /// BLOB values larger than this go as assets (``LargeBlobs``).
    var blobAssetThreshold = Int.max
    /// The merge policies: a counter column goes with its state.
    var policies = ColumnPolicies()

    /// One record in a batch: the record to save (nil for a delete), and the pending revision
    /// it was built from, so an edit made before the answer arrives stays pending.
    struct Item: Sendable {
        var metadata: RecordMetadata
        var record: CloudRecord?
        var revision: Int64
    }

    /// The next batch: whole local transactions while they fit in `limit` items (so another
    /// device never sees half of one), deletes children first, saves parents first. A record
    /// whose new parent lives in another zone moves there first, with its subtree
    /// (``ZoneMoves``).
    ///
    /// - Parameter excluded: records left out by name (those the send gave up on, and those
    ///   held back behind them), neither taken nor added as parents.
    func nextBatch(limit: Int, excluding excluded: ExactNames = [], in db: Database, movingRecords: Bool = true) throws -> [Item] {
        // Without a batch in flight, a move is always made: never nil.
        try nextBatch(limit: limit, excluding: excluded, in: db, moves: movingRecords ? .make : .ignore) ?? []
    }

    /// The batch that follows one the cloud has not answered yet (`inFlight`, by record name),
    /// built while that one travels: ``nextBatch(limit:in:movingRecords:)`` without the records
    /// in flight, and without their parents (which reach the cloud first: this batch goes only
    /// once the one in flight was accepted whole). Nil when a record of it must first move to
    /// another zone: moves are made between requests, never beside one in flight.
    func batch(following inFlight: ExactNames, limit: Int, in db: Database) throws -> [Item]? {
        try nextBatch(limit: limit, excluding: inFlight, in: db, moves: .refuse)
    }

    /// What a batch does with records whose parent lives in another zone.
    private enum MovePolicy {
        /// Moves them (and their subtrees) there, then builds the batch again.
        case make
        /// Sends them where they are (the batch built again after the moves).
        case ignore
        /// Builds no batch: nil.
        case refuse
    }

    private func nextBatch(limit: Int, excluding inFlight: ExactNames, in db: Database, moves policy: MovePolicy) throws -> [Item]? {
        // One more than fits: when it is there, the last transaction read may be cut short,
        // and is only taken if it is the first (a transaction larger than a request).
        let pending = try RecordMetadata.fetchPending(limit: limit + 1, excluding: inFlight, in: db)
        let lastMayBeCut = pending.count > limit
        var chosen: [RecordMetadata] = []
        var index = pending.startIndex
        while index < pending.endIndex {
            let transaction = pending[index].pendingTransaction
            var end = index
            while end < pending.endIndex && pending[end].pendingTransaction == transaction { end += 1 }
            let group = pending[index..<end]
            if lastMayBeCut && end == pending.endIndex && !chosen.isEmpty { break }
            if chosen.count + group.count <= limit {
                chosen += group
            } else {
                // A transaction larger than a request goes in pieces, parents first.
                if chosen.isEmpty { chosen = Array(sortedForSending(Array(group)).prefix(limit)) }
                break
            }
            index = end
        }
        // Each saved row is read once, here or while its parents are looked for.
        var rows: [RecordName: [DatabaseValue]?] = [:]
        chosen = try withPendingParents(of: chosen, excluding: inFlight, limit: limit, rows: &rows, in: db)
        var items: [Item] = []
        var parentZones = ExactKeyed<CloudZoneID?>()
        var moves: [(RecordName, RecordName, CloudZoneID)] = []
        for metadata in sortedForSending(chosen) {
            switch metadata.pendingOperation {
            case .delete:
                items.append(Item(metadata: metadata, record: nil, revision: metadata.pendingRevision))
            case .save:
                if let record = try record(for: metadata, values: rows[metadata.name], in: db) {
                    if policy != .ignore, let parent = record.parent, let parentName = RecordName(parent.name) {
                        let parentZone = try parentZones[parent.name] ?? RecordMetadata.zone(of: parentName, in: db)
                        parentZones[parent.name] = parentZone
                        if let parentZone, parentZone != metadata.zone { moves.append((metadata.name, parentName, parentZone)) }
                    }
                    items.append(Item(metadata: metadata, record: record, revision: metadata.pendingRevision))
                } else {
                    // The row is gone without a logged delete: the engine itself removed it
                    // (a cascade of a remote delete). Send a delete, which is harmless if the
                    // cloud has already forgotten the record.
                    var deleted = metadata
                    deleted.pendingOperation = .delete
                    try deleted.save(in: db)
                    items.append(Item(metadata: deleted, record: nil, revision: deleted.pendingRevision))
                }
            case nil:
                continue
            }
        }
        guard !moves.isEmpty else { return items }
        guard policy == .make else { return nil }
        for (name, parent, zone) in moves {
            try ZoneMoves.move(name, under: parent, to: zone, schema: schema, in: db)
        }
        return try nextBatch(limit: limit, excluding: inFlight, in: db, movingRecords: false)
    }

    /// Adds to a batch the pending saves of its saves' parents, and of theirs: a parent must
    /// reach the cloud before or with its children, whatever order the edits came in. Pending
    /// records go in the order of their last change's transaction, so a folder renamed after
    /// its new notes were inserted sorts after them; without this, the notes would go alone and
    /// the cloud would refuse every one (`referenceViolation`), batch after batch. When the
    /// parents make the batch too large, children wait for the next one (parents come first in
    /// ``sortedForSending(_:)``, so a child never goes without its parent).
    private func withPendingParents(
        of chosen: [RecordMetadata], excluding inFlight: ExactNames, limit: Int, rows: inout [RecordName: [DatabaseValue]?],
        in db: Database
    ) throws -> [RecordMetadata] {
        var batch = chosen
        var names = Set(chosen.map(\.name))
        // Parents already looked at: many children share one, and it is read once.
        var examined: Set<RecordName> = []
        var unexamined = chosen.filter { $0.pendingOperation == .save }
        var added = false
        while let child = unexamined.popLast() {
            guard let table = schema.table(named: child.name.table) else { continue }
            let values: [DatabaseValue]?
            if let known = rows[child.name] {
                values = known
            } else {
                values = try IncomingChanges.localValues(of: child.name, table: table, in: db)
                rows[child.name] = .some(values)
            }
            guard let reference = table.parent, let values, let index = table.sql.parentValueIndex else { continue }
            let value = values[index]
            guard value != .null else { continue }
            let parentName = RecordName(table: reference.parentTable, primaryKey: CloudValue(value).keyText)
            guard !names.contains(parentName), !inFlight.contains(parentName.text), examined.insert(parentName).inserted,
                let parent = try RecordMetadata.fetchPendingSave(parentName, in: db)
            else { continue }
            names.insert(parentName)
            batch.append(parent)
            unexamined.append(parent)
            added = true
        }
        guard added, batch.count > limit else { return batch }
        return Array(sortedForSending(batch).prefix(limit))
    }

    /// Deletes first, children before parents; then saves, parents before children.
    ///
    /// Records of one table keep their order. Each record's table is looked up once, not at
    /// every comparison: a batch of 400 made thousands of lookups by name.
    private func sortedForSending(_ metadata: [RecordMetadata]) -> [RecordMetadata] {
        let order = Dictionary(schema.tables.enumerated().map { ($1.name, $0) }) { first, _ in first }
        func sorted(_ operation: ChangeLog.Operation, parentsFirst: Bool) -> [RecordMetadata] {
            let keyed = metadata.enumerated().filter { $0.element.pendingOperation == operation }
                .map { (rank: order[$0.element.name.table] ?? 0, position: $0.offset) }
            return keyed.sorted { left, right in
                left.rank != right.rank ? (left.rank < right.rank) == parentsFirst : left.position < right.position
            }
            .map { metadata[$0.position] }
        }
        return sorted(.delete, parentsFirst: false) + sorted(.save, parentsFirst: true)
    }

    /// The record to save for a row: the last known server record (so fields of columns this
    /// version does not have survive), overlaid with the row's columns and their versions.
    ///
    /// - Parameter values: the row's value columns when already read (nil inside: no row);
    ///   nil to read them.
    func record(for metadata: RecordMetadata, values known: [DatabaseValue]?? = nil, in db: Database) throws -> CloudRecord? {
        guard let table = schema.table(named: metadata.name.table) else { return nil }
        let read = try known ?? IncomingChanges.localValues(of: metadata.name, table: table, in: db)
        guard let values = read else { return nil }
        let known = try metadata.serverRecord()
        var fields = known?.fields ?? Dictionary(minimumCapacity: table.columns.count)
        var versions = known?.fieldVersions ?? Dictionary(minimumCapacity: table.columns.count)
        for (column, value) in zip(table.valueColumns, values) {
            if table.assetColumns.contains(column), case .text(let text) = value, let id = AssetID(hexadecimal: text),
                let descriptor = try db.assetDescriptor(id)
            {
                fields[column] = .asset(CloudAssetReference(hash: id.hexadecimal, size: descriptor.size))
            } else if case .blob(let data) = value, data.count > blobAssetThreshold {
                fields[column] = .asset(CloudAssetReference(hash: AssetID(of: data).hexadecimal, size: Int64(data.count)))
            } else {
                fields[column] = CloudValue(value)
            }
            if let version = metadata.fieldVersions[column] { versions[column] = version }
        }
        // A counter goes as the total of its state, with the state: the two always agree in
        // what this version sends (an edit made since the last drain goes with the next send),
        // so a receiver never takes a difference for an older app's edit.
        for column in policies.counterColumns(of: table.name) {
            guard let state = try CounterStore.load(metadata.name, column: column, in: db) else { continue }
            let total: Int64
            do {
                total = try state.total()
            } catch {
                throw CounterMergeError.overflow(table: table.name, column: column, primaryKey: metadata.name.primaryKey)
            }
            // NULL counts as 0; a row set to NULL goes as NULL, so it reads NULL everywhere.
            if total != 0 || fields[column] != .null { fields[column] = .integer(total) }
            fields[CounterState.fieldName(of: column)] = CounterMerge.encode(state)
        }
        var parent: CloudRecordID?
        if let reference = table.parent, let value = fields[reference.column], value != .null {
            parent = CloudRecordID(
                name: RecordName(table: reference.parentTable, primaryKey: value.keyText).text, zone: metadata.zone)
        }
        return CloudRecord(
            id: metadata.recordID, type: table.name, fields: fields, fieldVersions: versions,
            parent: parent, changeTag: metadata.serverChangeTag)
    }
}
