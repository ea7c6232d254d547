import StrataCloud
import StrataSQLite

/// The engine's working copy of one ``SyncMetadata`` row, with its JSON decoded.
struct RecordMetadata: Sendable, Hashable {
    var name: RecordName
    var zone: CloudZoneID
    var parent: RecordName?
    /// The record as the cloud last returned it; nil when unknown, or while it is only stored
    /// (``storedServerRecord``). Read it with ``serverRecord()``.
    var lastKnownServerRecord: CloudRecord? {
        didSet { storedServerRecord = nil }
    }
    /// The JSON of the last known server record: as stored, not decoded yet (most reads of a
    /// metadata row replace the record without looking at it, an answer to a send or an
    /// incoming copy, and decoding it was a tenth of a first sync's time), or as written
    /// beforehand for the record just set (``setServerRecord(_:json:)``).
    private(set) var storedServerRecord: String?
    var serverChangeTag: String?
    var fieldVersions: [String: HybridTimestamp]
    var pendingOperation: ChangeLog.Operation?
    var pendingRevision: Int64
    var pendingTransaction: Int64?
    /// The version of the last local change, as stored: only the drain sets it, and every
    /// other read writes it back as it was, so it is parsed when asked for, not with the row
    /// (parsing it was a fifth of decoding a batch's rows to send them).
    var userModificationText: String?
    var userModificationTime: HybridTimestamp? {
        get { userModificationText.flatMap { HybridTimestamp($0) } }
        set { userModificationText = newValue?.description }
    }

    init(name: RecordName, zone: CloudZoneID) {
        self.name = name
        self.zone = zone
        fieldVersions = [:]
        pendingRevision = 0
    }

    static let columns = """
        recordType, recordPrimaryKey, zoneName, ownerName, parentRecordType, parentRecordPrimaryKey,
        lastKnownServerRecord, serverChangeTag, fieldVersions, pendingOperation, pendingRevision,
        pendingTransaction, userModificationTime
        """
    static let selection = "SELECT \(columns) FROM \(MetadatabaseTable.metadata.qualifiedName)"

    /// The metadata of many records in one statement: the names go as one JSON array of
    /// `[table, primary key]` pairs, which SQLite walks (the `CROSS JOIN` keeps it the outer
    /// loop), looking each up by the primary key.
    private static let selectionOfNames = """
        SELECT metadata.recordType, metadata.recordPrimaryKey, metadata.zoneName, metadata.ownerName,
               metadata.parentRecordType, metadata.parentRecordPrimaryKey, metadata.lastKnownServerRecord,
               metadata.serverChangeTag, metadata.fieldVersions, metadata.pendingOperation, metadata.pendingRevision,
               metadata.pendingTransaction, metadata.userModificationTime
        FROM json_each(?) AS wanted CROSS JOIN \(MetadatabaseTable.metadata.qualifiedName) AS metadata
        WHERE metadata.recordType = json_extract(wanted.value, '$[0]')
            AND metadata.recordPrimaryKey = json_extract(wanted.value, '$[1]')
        """

    static func decode(_ row: Row) throws -> RecordMetadata {
        let name = RecordName(table: try row[0], primaryKey: try row[1])
        var metadata = RecordMetadata(name: name, zone: CloudZoneID(name: try row[2], owner: try row[3]))
        let parentType: String? = try row[4]
        let parentKey: String? = try row[5]
        if let parentType, let parentKey { metadata.parent = RecordName(table: parentType, primaryKey: parentKey) }
        metadata.storedServerRecord = try row[6]
        do {
            metadata.fieldVersions = try SyncJSON.versions(try row[8])
        } catch {
            throw SyncEngineError.corruptMetadata(recordName: name.text, detail: "\(error)")
        }
        metadata.serverChangeTag = try row[7]
        let pending: String? = try row[9]
        metadata.pendingOperation = pending.flatMap(ChangeLog.Operation.init(rawValue:))
        metadata.pendingRevision = try row[10]
        metadata.pendingTransaction = try row[11]
        metadata.userModificationText = try row[12]
        return metadata
    }

    /// Sets the last known server record together with its JSON, written beforehand
    /// (``EncodedRecords``): saving the row then binds the text instead of encoding it.
    mutating func setServerRecord(_ record: CloudRecord, json: String?) {
        lastKnownServerRecord = record
        storedServerRecord = json
    }

    /// The last known server record, decoded from its stored JSON when it was not set since.
    ///
    /// - Throws: ``SyncEngineError/corruptMetadata(recordName:detail:)`` for JSON that does not decode.
    func serverRecord() throws -> CloudRecord? {
        if let lastKnownServerRecord { return lastKnownServerRecord }
        guard let storedServerRecord else { return nil }
        do {
            return try SyncJSON.decode(CloudRecord.self, from: storedServerRecord)
        } catch {
            throw SyncEngineError.corruptMetadata(recordName: name.text, detail: "\(error)")
        }
    }

    /// The metadata of one record, if the engine knows it.
    static func fetch(_ name: RecordName, in db: Database) throws -> RecordMetadata? {
        try db.fetchOne(sql: fetchSQL, arguments: [name.table, name.primaryKey], decode)
    }

    // The statements run once or more a record are spelled once: built by interpolation at
    // every call, each cost a new string, and the statement cache hashed all of it.
    private static let fetchSQL = selection + " WHERE recordType = ? AND recordPrimaryKey = ?"
    private static let zoneSQL =
        "SELECT zoneName, ownerName FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE recordType = ? AND recordPrimaryKey = ?"
    private static let pendingSaveSQL = selection + " WHERE recordType = ? AND recordPrimaryKey = ? AND pendingOperation = 'save'"

    /// The zone the engine knows `name` in, without reading the rest of its metadata.
    static func zone(of name: RecordName, in db: Database) throws -> CloudZoneID? {
        try db.fetchOne(sql: zoneSQL, arguments: [name.table, name.primaryKey]) { row in CloudZoneID(name: try row[0], owner: try row[1]) }
    }

    /// The metadata of `name` when a save of it is pending; nil otherwise, without decoding
    /// the row: a batch of children asks this of every parent, and most were sent long ago.
    static func fetchPendingSave(_ name: RecordName, in db: Database) throws -> RecordMetadata? {
        try db.fetchOne(sql: pendingSaveSQL, arguments: [name.table, name.primaryKey], decode)
    }

    /// The metadata the engine knows of `names`, by name; names it does not know are left out.
    static func fetchAll(_ names: some Collection<RecordName>, in db: Database) throws -> [RecordName: RecordMetadata] {
        guard !names.isEmpty else { return [:] }
        var pairs = JSONWriter(capacity: names.count * 56)
        pairs.array(names) { writer, name in
            writer.byte("[")
            writer.string(name.table)
            writer.byte(",")
            writer.string(name.primaryKey)
            writer.byte("]")
        }
        let found = try db.fetchAll(sql: selectionOfNames, arguments: [pairs.text], decode)
        return Dictionary(found.map { ($0.name, $0) }) { first, _ in first }
    }

    /// The first `limit` records with a change waiting to be sent, oldest transaction first,
    /// apart from the records named in `excluded` (a batch the cloud has not answered yet).
    static func fetchPending(limit: Int, excluding excluded: ExactNames = [], in db: Database) throws -> [RecordMetadata] {
        guard !excluded.isEmpty else {
            return try db.fetchAll(sql: pendingSQL, arguments: [limit], decode)
        }
        // Left out in SQL, so the rows skipped cost an index step each, not a decoded row.
        var names = JSONWriter(capacity: excluded.count * 48)
        names.array(Array(excluded)) { writer, name in writer.string(name) }
        return try db.fetchAll(sql: pendingExcludingSQL, arguments: [names.text, limit], decode)
    }

    /// The statements of ``fetchPending(limit:excluding:in:)``: read in the index's order, never
    /// sorted (MetadataLayoutTests).
    static let pendingSQL =
        selection + " WHERE pendingOperation IS NOT NULL ORDER BY pendingTransaction, recordType, recordPrimaryKey LIMIT ?"
    static let pendingExcludingSQL =
        selection + """
             WHERE pendingOperation IS NOT NULL
                AND (recordPrimaryKey || ':' || recordType) NOT IN (SELECT value FROM json_each(?))
             ORDER BY pendingTransaction, recordType, recordPrimaryKey LIMIT ?
            """

    /// How many records wait to be sent.
    static func pendingCount(in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE pendingOperation IS NOT NULL")
            ?? 0
    }

    /// How many records wait to be sent in each zone.
    static func pendingCountsByZone(in db: Database) throws -> [CloudZoneID: Int] {
        let rows = try db.fetchAll(
            sql: """
                SELECT zoneName, ownerName, count(*) FROM \(MetadatabaseTable.metadata.qualifiedName)
                WHERE pendingOperation IS NOT NULL GROUP BY zoneName, ownerName
                """
        ) { row in (CloudZoneID(name: try row[0], owner: try row[1]), try row[2] as Int) }
        return Dictionary(rows, uniquingKeysWith: +)
    }

    /// Inserts or updates the row; the share columns, which the sharing calls own, stay.
    ///
    /// - Parameter versionsJSON: ``fieldVersions`` as JSON, when it was written beforehand.
    func save(in db: Database, versionsJSON: String? = nil) throws {
        let serverRecord: String? = try storedServerRecord ?? lastKnownServerRecord.map { try SyncJSON.encode($0) }
        try db.execute(
            sql: Self.saveSQL,
            arguments: [
                name.table, name.primaryKey, zone.name, zone.owner, parent?.table, parent?.primaryKey, serverRecord, serverChangeTag,
                versionsJSON ?? SyncJSON.encode(fieldVersions), pendingOperation?.rawValue, pendingRevision, pendingTransaction,
                userModificationText,
            ])
    }

    private static let saveSQL = """
        INSERT INTO \(MetadatabaseTable.metadata.qualifiedName)
            (recordType, recordPrimaryKey, zoneName, ownerName, parentRecordType, parentRecordPrimaryKey,
             lastKnownServerRecord, serverChangeTag, fieldVersions, pendingOperation, pendingRevision,
             pendingTransaction, userModificationTime)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (recordType, recordPrimaryKey) DO UPDATE SET
            zoneName = excluded.zoneName, ownerName = excluded.ownerName,
            parentRecordType = excluded.parentRecordType, parentRecordPrimaryKey = excluded.parentRecordPrimaryKey,
            lastKnownServerRecord = excluded.lastKnownServerRecord, serverChangeTag = excluded.serverChangeTag,
            fieldVersions = excluded.fieldVersions, pendingOperation = excluded.pendingOperation,
            pendingRevision = excluded.pendingRevision, pendingTransaction = excluded.pendingTransaction,
            userModificationTime = excluded.userModificationTime
        """

    /// Records the cloud's acceptance of a save in one statement, without reading the row:
    /// the saved copy becomes the last known server record, and the save stops being pending
    /// unless the row changed again since the batch was built (its revision moved on).
    /// Returns false when the engine has no metadata for the record (the caller saves it whole).
    ///
    /// Answers are most of a first sync's bookkeeping; reading and rewriting the whole row
    /// (its field versions decoded and encoded again) cost two statements a record.
    ///
    /// - Parameter json: `saved` as JSON, when it was written beforehand (``EncodedRecords``).
    static func recordSaved(_ name: RecordName, as saved: CloudRecord, json: String?, revision: Int64, in db: Database) throws -> Bool {
        let parent = saved.parent.flatMap { RecordName($0.name) }
        try db.execute(
            sql: Self.recordSavedSQL,
            arguments: [
                try json ?? SyncJSON.encode(saved), saved.changeTag, parent?.table, parent?.primaryKey, revision, name.table,
                name.primaryKey,
            ])
        return db.changesCount > 0
    }

    private static let recordSavedSQL = """
        UPDATE \(MetadatabaseTable.metadata.qualifiedName) SET
            lastKnownServerRecord = ?, serverChangeTag = ?, parentRecordType = ?, parentRecordPrimaryKey = ?,
            pendingOperation = CASE WHEN pendingOperation = 'save' AND pendingRevision = ? THEN NULL
                                    ELSE pendingOperation END
        WHERE recordType = ? AND recordPrimaryKey = ?
        """

    /// Moves the pending changes of the records whose last known parent in the cloud is
    /// `parent` into `transaction`, when they come after it; returns how many moved. A child
    /// moved to another parent, or deleted, after its old parent's delete sorts after that
    /// delete, which the cloud refuses while it still holds the child there: in one request,
    /// the child's delete or move lets the parent go.
    static func advancePendingChildren(of parent: RecordName, to transaction: Int64?, in db: Database) throws -> Int {
        guard let transaction else { return 0 }
        try db.execute(
            sql: """
                UPDATE \(MetadatabaseTable.metadata.qualifiedName) SET pendingTransaction = ?
                WHERE parentRecordType = ? AND parentRecordPrimaryKey = ? AND pendingOperation IS NOT NULL
                    AND (pendingTransaction IS NULL OR pendingTransaction > ?)
                """,
            arguments: [transaction, parent.table, parent.primaryKey, transaction])
        return db.changesCount
    }

    /// Moves the pending delete of `parent` one transaction later when changes of its children
    /// (as the cloud knows them) wait in its transaction or before it; returns whether it
    /// moved. A transaction larger than a request goes in pieces taken in key order, so a
    /// parent's delete can come up before its own children's changes, which the cloud needs
    /// first; behind them, it goes once they went.
    ///
    /// - Parameter sentWith: the records of the request the delete was refused in. Children
    ///   that went with it do not count: they went first in that very request, so the cloud
    ///   refused the delete for a child it holds that this device never saw, and moving the
    ///   delete behind them only built the same request again, round after round, until the
    ///   send stalled (an outside review found it). The caller fetches instead.
    static func postponeDeleteBehindPendingChildren(
        of parent: RecordName, sentWith: [RecordName], in db: Database
    ) throws -> Bool {
        let table = MetadatabaseTable.metadata.qualifiedName
        var sent = JSONWriter(capacity: sentWith.count * 24)
        sent.array(sentWith) { writer, name in writer.string(name.text) }
        try db.execute(
            sql: """
                UPDATE \(table) SET pendingTransaction = pendingTransaction + 1
                WHERE recordType = ? AND recordPrimaryKey = ? AND pendingOperation = 'delete' AND pendingTransaction IS NOT NULL
                    AND EXISTS (
                        SELECT 1 FROM \(table) AS child
                        WHERE child.parentRecordType = ? AND child.parentRecordPrimaryKey = ?
                            AND child.pendingOperation IS NOT NULL
                            AND child.pendingTransaction <= \(table).pendingTransaction
                            AND child.recordName NOT IN (SELECT value FROM json_each(?)))
                """,
            arguments: [parent.table, parent.primaryKey, parent.table, parent.primaryKey, sent.text])
        return db.changesCount > 0
    }

    static func delete(_ name: RecordName, in db: Database) throws {
        try db.execute(
            sql: "DELETE FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE recordType = ? AND recordPrimaryKey = ?",
            arguments: [name.table, name.primaryKey])
    }

    var recordID: CloudRecordID { CloudRecordID(name: name.text, zone: zone) }
}
