import Foundation
import Logging
import StrataAssets
import StrataSQLite

/// Applies records and deletions fetched from the cloud to the user's tables and the
/// metadata, inside the caller's transaction. The caller marks the transaction as the engine's
/// own (``ChangeCapture/withoutCapture(_:)``) so capture triggers skip it.
///
/// Applying the same records twice changes nothing (``FieldMerge`` lets an equal version win),
/// which is what makes a page safe to re-apply after a crash.
struct IncomingChanges {
    let schema: SyncSchema
    let clock: HybridLogicalClock
    let logger: Logger
    /// The downloaded content of large BLOB values, by hash (``LargeBlobs``).
    var blobs: [String: Data] = [:]
    /// The signed-in user: a record new to this device in another user's zone starts with
    /// its parent's share permission (`none` for a root, until its share is read), so it never
    /// looks like the user's own.
    var currentUser: String?
    /// The columns that merge by a policy rather than by the default rule.
    var policies = ColumnPolicies()
    /// The metadata JSON of the records being applied, written before their transaction.
    var encoded = EncodedRecords()

    /// The column value of a field: a large BLOB's bytes for a reference in a plain column,
    /// the value itself otherwise.
    ///
    /// A reference's bytes come from the page's downloads, from the content kept with the
    /// record while it waited (``MetadatabaseTable/waitingContent``), or from the local asset
    /// store. Never the reference itself: a user's BLOB column must not receive a hash.
    ///
    /// - Throws: ``SyncEngineError/missingContent(recordName:column:hash:)`` when the bytes are
    ///   nowhere on this device.
    func columnValue(
        _ value: CloudValue, column: String, of table: SyncedTable, record: CloudRecordID, in db: Database
    ) throws -> DatabaseValue {
        guard case .asset(let reference) = value, !table.assetColumns.contains(column) else { return value.databaseValue }
        if let data = blobs[reference.hash] { return .blob(data) }
        if let data = try Data.fetchOne(
            db,
            sql:
                "SELECT content FROM \(MetadatabaseTable.waitingContent.qualifiedName) WHERE zoneName = ? AND ownerName = ? AND recordName = ? AND hash = ?",
            arguments: [record.zone.name, record.zone.owner, record.name, reference.hash])
        {
            return .blob(data)
        }
        if let id = AssetID(hexadecimal: reference.hash), try db.tableExists(AssetSchema.assetsTable), try db.assetExists(id) {
            return .blob(try db.assetData(id))
        }
        throw SyncEngineError.missingContent(recordName: record.name, column: column, hash: reference.hash)
    }

    /// The large BLOB contents a record refers to in plain columns, by hash, that this page
    /// downloaded: kept with the record when it waits.
    private func downloadedContent(of record: CloudRecord) -> [(hash: String, content: Data)] {
        guard let table = schema.table(named: record.type) else { return [] }
        return record.fields.compactMap { column, value in
            guard case .asset(let reference) = value, !table.assetColumns.contains(column),
                let data = blobs[reference.hash]
            else { return nil }
            return (reference.hash, data)
        }
    }

    /// What applying a page did, for logs and tests.
    struct Report: Sendable, Equatable {
        var saved: [String] = []
        var deleted: [String] = []
        var merged: [String] = []
        var waitingForParent: [String] = []
        var unknownTable: [String] = []
        var quarantined: [String] = []
    }

    func apply(records: [CloudRecord], tombstones: [CloudTombstone], in db: Database) throws -> Report {
        var report = Report()
        let order = Dictionary(uniqueKeysWithValues: schema.tables.enumerated().map { ($1.name, $0) })
        for tombstone in tombstones.sorted(by: { (order[$0.type] ?? .max) > (order[$1.type] ?? .max) }) {
            try applyDeletion(tombstone.id, in: db, report: &report)
        }
        // After the deletions: from here on the pass only inserts and updates rows.
        let page = try ApplyingPage.begin(records, in: db)
        for index in Self.parentTablesFirst(records, order: order) {
            let record = records[index]
            try apply(record, texts: encoded.texts(at: index, of: record), in: db, report: &report, page: page)
        }
        if !records.isEmpty { try retryWaitingRecords(in: db, report: &report) }
        return report
    }

    /// The positions of `records`, those of each synced table together in the tables' order
    /// (parents before children), unknown tables last, each table's in page order: what a
    /// stable sort by table gives, in one pass rather than a comparison's two dictionary
    /// lookups, which cost 4 % of applying a page.
    static func parentTablesFirst(_ records: [CloudRecord], order: [String: Int]) -> [Int] {
        var tables = [[Int]](repeating: [], count: order.count + 1)
        var lastType: String?
        var slot = order.count
        for (index, record) in records.enumerated() {
            if record.type != lastType {
                lastType = record.type
                slot = order[record.type] ?? order.count
            }
            tables[slot].append(index)
        }
        return Array(tables.joined())
    }

    /// Applies one record: merged per field into the local row, or kept aside when it cannot
    /// be applied yet.
    ///
    /// - Parameter page: what the pass over the record's page knows so far; nil for a record
    ///   applied on its own.
    func apply(_ record: CloudRecord, in db: Database, report: inout Report, page: ApplyingPage? = nil) throws {
        try apply(record, texts: encoded[record], in: db, report: &report, page: page)
    }

    /// - Parameter texts: the record's JSON, written beforehand (``encoded``).
    private func apply(
        _ record: CloudRecord, texts: EncodedRecords.Texts?, in db: Database, report: inout Report, page: ApplyingPage?
    ) throws {
        if case .text(let rejection) = record.fields[EncryptedCloudDatabase.rejectionField] {
            // Sealed fields that did not open (tampered with, moved, a retired or missing key):
            // nothing of it is applied, and it stays visible in the quarantine.
            try quarantine(record, reason: "encryption: \(rejection)", in: db)
            report.quarantined.append(record.id.name)
            return
        }
        if record.fields[RecordSealing.fieldName] != nil {
            // Sealed, and not opened on the way in: this engine does not encrypt. Applied, it
            // would become a row of empty columns.
            try quarantine(record, reason: "encryption: record \(record.id) is sealed, and this engine does not encrypt", in: db)
            report.quarantined.append(record.id.name)
            return
        }
        if let newest = record.fieldVersions.values.max() {
            if let drift = clock.observe(newest) {
                logger.warning("record \(record.id.name) carries a version \(drift) ahead of this device's clock")
            }
        }
        guard let name = RecordName(record.id.name), let table = schema.table(named: name.table), name.table == record.type
        else {
            try keepAside(record, reason: "unknownTable", in: db, page: page)
            report.unknownTable.append(record.id.name)
            return
        }
        let stored = try page?.storedMetadata(name) ?? RecordMetadata.fetch(name, in: db)
        if let reference = table.parent,
            IncomingDecision.isLeftBehindCopy(
                storedZone: stored?.zone, incomingZone: record.id.zone,
                localParentVersion: stored?.fieldVersions[reference.column], incomingParentVersion: record.fieldVersions[reference.column])
        {
            return
        }
        var metadata = stored ?? RecordMetadata(name: name, zone: record.id.zone)
        if metadata.pendingOperation == .delete {
            // A local delete not sent yet wins: remember the server's copy and send the delete.
            metadata.setServerRecord(record, json: texts?.record)
            metadata.serverChangeTag = record.changeTag
            try metadata.save(in: db)
            return
        }
        var fields = record.fields
        var forcedLocal: [String: HybridTimestamp] = [:]
        if let parent = table.parent, let value = fields[parent.column], value != .null {
            let parentName = RecordName(table: parent.parentTable, primaryKey: value.keyText)
            if try !(page?.rowExists(parentName, schema: schema, in: db) ?? Self.rowExists(parentName, schema: schema, in: db)) {
                let decision = IncomingDecision.missingParent(
                    parentDeletedLocally: try RecordMetadata.fetch(parentName, in: db)?.pendingOperation == .delete,
                    onDelete: parent.onDelete,
                    localColumnVersion: try RecordMetadata.fetch(name, in: db)?.fieldVersions[parent.column],
                    incomingColumnVersion: record.fieldVersions[parent.column])
                switch decision {
                case .waitForParent:
                    try keepAside(record, reason: "missingParent", in: db, page: page)
                    report.waitingForParent.append(record.id.name)
                    return
                case .deleteWithParent:
                    metadata.lastKnownServerRecord = record
                    metadata.serverChangeTag = record.changeTag
                    // Its parent as the cloud holds it: a send keeps this delete and the
                    // parent's out of requests travelling together (an outside review found
                    // them side by side, the parent's refused when taken first).
                    metadata.parent = parentName
                    metadata.pendingOperation = .delete
                    metadata.pendingRevision += 1
                    try metadata.save(in: db)
                    report.deleted.append(record.id.name)
                    return
                case .replaceParentColumn:
                    fields[parent.column] = CloudValue(try Self.onDeleteReplacement(for: parent, in: table, db: db))
                    forcedLocal[parent.column] = clock.next()
                case .keepLocalParentColumn:
                    break
                }
            }
        }
        // A join table's row has no parent, but its foreign keys hold all the same: one that
        // arrives before a row it references (an earlier page; a referenced row edited after
        // the link, sent in a later batch) waits for it, rather than failing its foreign key
        // and being quarantined. A referenced row deleted here and not sent yet is not waited
        // for: the row fails as before.
        if table.parent == nil {
            for reference in table.references where schema.table(named: reference.parentTable) != nil {
                guard let value = fields[reference.column], value != .null else { continue }
                let referenced = RecordName(table: reference.parentTable, primaryKey: value.keyText)
                if try !(page?.rowExists(referenced, schema: schema, in: db) ?? Self.rowExists(referenced, schema: schema, in: db)),
                    try RecordMetadata.fetch(referenced, in: db)?.pendingOperation != .delete
                {
                    try keepAside(record, reason: "missingParent", in: db, page: page)
                    report.waitingForParent.append(record.id.name)
                    return
                }
            }
        }
        for column in table.sql.affinities {
            if let value = fields[column.name], let problem = column.affinity.mismatch(value) {
                try quarantine(record, reason: "column \(column.name) (\(column.declaredType)): \(problem)", in: db)
                report.quarantined.append(record.id.name)
                return
            }
        }
        let columns = table.valueColumns
        let existing = try Self.localValues(of: name, table: table, in: db)
        var merging = record
        merging.fields = fields
        for (column, version) in forcedLocal { metadata.fieldVersions[column] = version }
        let rules = policies.rules(of: table.name)
        var outcome = FieldMerge.merge(
            columns: rules.isEmpty ? columns : columns.filter { rules[$0] == nil }, localVersions: metadata.fieldVersions,
            incoming: merging, rowExists: existing != nil)
        var counterStates: [String: CounterState] = [:]
        if !rules.isEmpty {
            do {
                counterStates = try mergeByPolicies(
                    rules, columns: columns, existing: existing, metadata: metadata, incoming: merging, table: table, outcome: &outcome,
                    in: db)
            } catch {
                guard let reason = Self.recordsOwnFault(error, includingDatabaseErrors: false) else { throw error }
                try quarantine(record, reason: reason, in: db)
                report.quarantined.append(record.id.name)
                return
            }
        }
        var winners = outcome.incomingWins
        for column in forcedLocal.keys { winners[column] = fields[column] }
        var rowChanged = false
        func write() throws {
            if let existing {
                let changed = try columns.enumerated().compactMap { index, column -> (String, DatabaseValue)? in
                    guard let field = winners[column] else { return nil }
                    let value = try columnValue(field, column: column, of: table, record: record.id, in: db)
                    guard value != existing[index] else { return nil }
                    return (column, value)
                }
                if !changed.isEmpty {
                    rowChanged = true
                    let assignments = changed.map { "\($0.0.quotedIdentifier) = ?" }.joined(separator: ", ")
                    try db.execute(
                        sql:
                            "UPDATE main.\(table.name.quotedIdentifier) SET \(assignments) WHERE \(table.primaryKey.quotedIdentifier) = ?",
                        arguments: StatementArguments(changed.map(\.1) + [DatabaseValue.text(name.primaryKey)]))
                }
            } else {
                rowChanged = true
                let inserted = columns.filter { winners[$0] != nil }
                try db.execute(
                    sql: inserted.count == columns.count
                        ? table.sql.insertAll : TableSQL.insert(into: table.name, primaryKey: table.primaryKey, columns: inserted),
                    arguments: StatementArguments(
                        [DatabaseValue.text(name.primaryKey)]
                            + inserted.compactMap { column in
                                try winners[column].map { try columnValue($0, column: column, of: table, record: record.id, in: db) }
                            }))
            }
        }
        do {
            if try page?.needsSavepoint(table, in: db) ?? true {
                try db.inSavepoint {
                    try write()
                    return .commit
                }
            } else {
                try write()
            }
        } catch {
            guard let reason = Self.recordsOwnFault(error, includingDatabaseErrors: true) else { throw error }
            try quarantine(record, reason: reason, in: db)
            report.quarantined.append(record.id.name)
            return
        }
        metadata.zone = record.id.zone
        metadata.parent = record.parent.flatMap { RecordName($0.name) }
        metadata.setServerRecord(record, json: texts?.record)
        metadata.serverChangeTag = record.changeTag
        metadata.fieldVersions = outcome.versions.merging(forcedLocal) { _, forced in forced }
        (metadata.pendingOperation, metadata.pendingRevision) = IncomingDecision.pendingAfterMerge(
            localWins: outcome.localWins, forcedLocally: !forcedLocal.isEmpty,
            pending: metadata.pendingOperation, revision: metadata.pendingRevision)
        // A record new here keeps the versions it came with: their text is written already.
        try metadata.save(in: db, versionsJSON: metadata.fieldVersions == record.fieldVersions ? texts?.versions : nil)
        for (column, state) in counterStates { try CounterStore.save(state, of: name, column: column, in: db) }
        if stored == nil, let currentUser, record.id.zone.owner != currentUser {
            try db.execute(
                sql: """
                    UPDATE \(MetadatabaseTable.metadata.qualifiedName) SET sharePermission = coalesce(
                        (SELECT sharePermission FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE recordType = ? AND recordPrimaryKey = ?), 'none')
                    WHERE recordType = ? AND recordPrimaryKey = ?
                    """,
                arguments: [metadata.parent?.table, metadata.parent?.primaryKey, name.table, name.primaryKey])
        }
        if page?.mayBeWaiting(record.id) ?? true { try Self.forgetWaiting(record.id, in: db) }
        page?.written(name)
        // A record that changes nothing here (this device's own save coming back) is not news.
        if outcome.localWins {
            report.merged.append(record.id.name)
        } else if rowChanged {
            report.saved.append(record.id.name)
        }
    }

    /// Merges the columns that have a policy (``MergePolicy``) into `outcome`, as ``FieldMerge``
    /// does for the others; returns the counters' merged states, to keep once the row is
    /// written.
    ///
    /// - Throws: ``CounterMergeError`` for a counter that cannot be merged (the record is
    ///   quarantined); ``SyncEngineError/missingContent(recordName:column:hash:)``.
    private func mergeByPolicies(
        _ rules: [String: MergePolicy.Rule], columns: [String], existing: [DatabaseValue]?, metadata: RecordMetadata,
        incoming record: CloudRecord, table: SyncedTable, outcome: inout FieldMerge.Outcome, in db: Database
    ) throws -> [String: CounterState] {
        var states: [String: CounterState] = [:]
        // Read once, for the first custom column: what the cloud last sent or acknowledged.
        var lastKnown: CloudRecord??
        for (index, column) in columns.enumerated() {
            guard let rule = rules[column] else { continue }
            let local = existing?[index]
            let localVersion = local == nil ? nil : metadata.fieldVersions[column]
            switch rule {
            case .custom(let merge):
                let incoming = try record.fields[column].map { try columnValue($0, column: column, of: table, record: record.id, in: db) }
                let known: CloudRecord?
                if let read = lastKnown {
                    known = read
                } else {
                    known = try metadata.serverRecord()
                    lastKnown = .some(known)
                }
                let decision = CustomMerge.decide(
                    local: local, localVersion: localVersion, incoming: incoming, incomingVersion: record.fieldVersions[column],
                    knownVersion: known?.fieldVersions[column], merge: merge)
                if let value = decision.value { outcome.incomingWins[column] = CloudValue(value) }
                if let version = decision.version { outcome.versions[column] = version }
                if decision.localWins { outcome.localWins = true }
            case .counter:
                let stored = try CounterStore.load(metadata.name, column: column, in: db)
                let lastKnown = stored == nil ? try metadata.serverRecord() : nil
                let result: CounterMerge.Outcome
                do throws(CounterMerge.Failure) {
                    let known = try CounterMerge.knownState(
                        stored: stored, lastKnown: lastKnown.map { CounterStore.incoming($0, column: column) })
                    result = try CounterMerge.apply(
                        local: local, localVersion: localVersion, known: known, incoming: CounterStore.incoming(record, column: column),
                        device: clock.node, nextVersion: clock.next)
                } catch {
                    throw CounterStore.error(error, name: metadata.name, column: column)
                }
                if let value = result.value { outcome.incomingWins[column] = value }
                if let version = result.version { outcome.versions[column] = version }
                if result.localWins { outcome.localWins = true }
                if let state = result.state { states[column] = state }
            }
        }
        return states
    }

    /// Applies a deletion made elsewhere, unless a local edit is waiting to be sent: an edit
    /// beats a remote delete, and the record is sent again as new.
    func applyDeletion(_ id: CloudRecordID, in db: Database, report: inout Report) throws {
        try Self.forgetWaiting(id, in: db)
        guard let name = RecordName(id.name), let table = schema.table(named: name.table) else { return }
        var metadata = try RecordMetadata.fetch(name, in: db)
        // The record moved to another zone: this deletes the copy it left behind.
        if let metadata, metadata.zone != id.zone { return }
        if metadata?.pendingOperation == .save, var pending = metadata {
            pending.serverChangeTag = nil
            metadata = pending
            try pending.save(in: db)
            return
        }
        try db.execute(
            sql: "DELETE FROM main.\(table.name.quotedIdentifier) WHERE \(table.primaryKey.quotedIdentifier) = ?",
            arguments: [name.primaryKey])
        try RecordMetadata.delete(name, in: db)
        report.deleted.append(id.name)
    }

    /// Applies records kept aside while they waited for a parent, now that more arrived; a
    /// bounded batch per call, so a long chain cannot stall a fetch.
    func retryWaitingRecords(in db: Database, report: inout Report, batchSize: Int = 500) throws {
        var rounds = 0
        while rounds < 100 {
            rounds += 1
            let waiting = try db.fetchAll(
                sql: "SELECT record FROM \(MetadatabaseTable.unsyncedRecords.qualifiedName) WHERE reason = 'missingParent' LIMIT ?",
                arguments: [batchSize]
            ) { row in try SyncJSON.decode(CloudRecord.self, from: try row[0]) }
            guard !waiting.isEmpty else { return }
            var roundReport = Report()
            for record in waiting { try apply(record, in: db, report: &roundReport) }
            report.saved += roundReport.saved
            report.merged += roundReport.merged
            report.quarantined += roundReport.quarantined
            // Nothing applied this round: the rest still wait for parents not yet fetched.
            if roundReport.waitingForParent.count == waiting.count { return }
        }
    }

    /// Applies the records of a table this version did not know, once it syncs it.
    func applyRecordsOfNewTables(in db: Database, report: inout Report) throws {
        let names = schema.tables.map(\.name)
        guard !names.isEmpty else { return }
        let marks = Array(repeating: "?", count: names.count).joined(separator: ", ")
        let records = try db.fetchAll(
            sql:
                "SELECT record FROM \(MetadatabaseTable.unsyncedRecords.qualifiedName) WHERE reason = 'unknownTable' AND recordType IN (\(marks))",
            arguments: StatementArguments(names)
        ) { row in try SyncJSON.decode(CloudRecord.self, from: try row[0]) }
        for record in records.sorted(by: { lhs, rhs in
            (names.firstIndex(of: lhs.type) ?? 0) < (names.firstIndex(of: rhs.type) ?? 0)
        }) {
            try apply(record, in: db, report: &report)
        }
    }

    /// The value `SET NULL` or `SET DEFAULT` gives a child's foreign key column.
    static func onDeleteReplacement(for reference: SyncedTable.ParentReference, in table: SyncedTable, db: Database) throws -> DatabaseValue
    {
        guard reference.onDelete == "SET DEFAULT",
            let expression = try String.fetchOne(
                db, sql: "SELECT dflt_value FROM pragma_table_info(?) WHERE name = ?", arguments: [table.name, reference.column])
        else { return .null }
        return try DatabaseValue.fetchOne(db, sql: "SELECT (\(expression))") ?? .null
    }

    static func rowExists(_ name: RecordName, schema: SyncSchema, in db: Database) throws -> Bool {
        guard let table = schema.table(named: name.table) else { return false }
        return try Int.fetchOne(db, sql: table.sql.selectExists, arguments: [name.primaryKey]) != nil
    }

    /// The row's value columns, in ``SyncedTable/valueColumns`` order, or nil without a row.
    static func localValues(of name: RecordName, table: SyncedTable, in db: Database) throws -> [DatabaseValue]? {
        let count = table.sql.valueColumns.count
        return try db.fetchOne(sql: table.sql.selectValues, arguments: [name.primaryKey]) { row in
            try (0..<count).map { index in try row[index] as DatabaseValue }
        }
    }

    /// The large BLOB contents that records waiting in `zone` refer to and that were not kept
    /// with them (records kept aside by an earlier version): the fetch downloads them before it
    /// retries the records.
    static func contentMissingForWaitingRecords(in zone: CloudZoneID, schema: SyncSchema, db: Database) throws -> [String] {
        let waiting = try db.fetchAll(
            sql:
                "SELECT record FROM \(MetadatabaseTable.unsyncedRecords.qualifiedName) WHERE zoneName = ? AND ownerName = ? AND reason = 'missingParent'",
            arguments: [zone.name, zone.owner]
        ) { row in try SyncJSON.decode(CloudRecord.self, from: try row[0]) }
        var missing: [String] = []
        for record in waiting {
            guard let table = schema.table(named: record.type) else { continue }
            for (column, value) in record.fields where !table.assetColumns.contains(column) {
                guard case .asset(let reference) = value else { continue }
                let kept =
                    try Bool.fetchOne(
                        db,
                        sql:
                            "SELECT EXISTS (SELECT 1 FROM \(MetadatabaseTable.waitingContent.qualifiedName) WHERE zoneName = ? AND ownerName = ? AND recordName = ? AND hash = ?)",
                        arguments: [zone.name, zone.owner, record.id.name, reference.hash]) ?? false
                if !kept && !missing.contains(reference.hash) { missing.append(reference.hash) }
            }
        }
        return missing
    }

    /// Forgets a record kept aside, and the content kept with it.
    static func forgetWaiting(_ id: CloudRecordID, in db: Database) throws {
        for table in [MetadatabaseTable.unsyncedRecords, .waitingContent] {
            try db.execute(
                sql: "DELETE FROM \(table.qualifiedName) WHERE zoneName = ? AND ownerName = ? AND recordName = ?",
                arguments: [id.zone.name, id.zone.owner, id.name])
        }
    }

    /// Keeps a record that cannot be applied yet, with the large BLOB contents downloaded for
    /// it: whenever it is applied, its columns get the bytes, not their hash.
    private func keepAside(_ record: CloudRecord, reason: String, in db: Database, page: ApplyingPage?) throws {
        page?.keptAside(record.id)
        for (hash, content) in downloadedContent(of: record) {
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO \(MetadatabaseTable.waitingContent.qualifiedName)
                        (recordName, zoneName, ownerName, hash, content) VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [record.id.name, record.id.zone.name, record.id.zone.owner, hash, content])
        }
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO \(MetadatabaseTable.unsyncedRecords.qualifiedName) (recordName, zoneName, ownerName, recordType, reason, record)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [record.id.name, record.id.zone.name, record.id.zone.owner, record.type, reason, try SyncJSON.encode(record)])
    }

    private func quarantine(_ record: CloudRecord, reason: String, in db: Database) throws {
        logger.error(
            "quarantined record",
            metadata: ["recordType": "\(record.type)", "recordName": "\(record.id.name)", "reason": "\(reason)"])
        try db.execute(
            sql: """
                INSERT OR REPLACE INTO \(MetadatabaseTable.quarantinedRecords.qualifiedName) (recordName, zoneName, ownerName, recordType, error, record)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
            arguments: [record.id.name, record.id.zone.name, record.id.zone.owner, record.type, reason, try SyncJSON.encode(record)])
    }
}

extension IncomingChanges {
    /// Why a record is quarantined when applying it threw `error`, or nil when the error is not
    /// the record's own (and is rethrown): a counter state it carries that cannot merge, content
    /// the fetch should have brought and the cloud lost (kept visibly rather than applied with a
    /// hash in a BLOB column), and, while writing the row, a constraint the row breaks.
    static func recordsOwnFault(_ error: any Error, includingDatabaseErrors: Bool) -> String? {
        switch error {
        case let error as CounterMergeError: return error.description
        case let error as SyncEngineError:
            guard case .missingContent = error else { return nil }
            return error.description
        case let error as DatabaseError where includingDatabaseErrors: return error.description
        default: return nil
        }
    }
}

extension CloudValue {
    /// The value as a primary key's text.
    var keyText: String {
        switch self {
        case .null: ""
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .bytes(let data): data.base64EncodedString()
        case .asset(let reference): reference.hash
        }
    }
}
