import StrataCloud
import StrataSQLite

/// What applying one page of records learns as it goes, so that each record of the page does
/// not ask SQLite again: the rows known to exist (parents are applied before their children,
/// and many children share one), and which of its records wait aside.
///
/// Valid for one pass over a page's records, inside its transaction: applying records only
/// inserts and updates rows, so a row seen is still there at the end of the pass.
final class ApplyingPage {
    private var existingRows: Set<RecordName> = []
    /// The stored metadata of the page's records, read in one statement; each is taken once.
    private var prefetched: [RecordName: RecordMetadata] = [:]
    private var unread: Set<RecordName> = []
    private var savepointNeeded: [String: Bool] = [:]
    /// The page's records that may be stored aside (``MetadatabaseTable/unsyncedRecords``,
    /// ``MetadatabaseTable/waitingContent``): those found there when the page began, and those
    /// kept aside since. Applying any other record has nothing to forget there. `String`
    /// equality makes look-alike names match too, which only costs a needless `DELETE`.
    private var mayWait: Set<CloudRecordID> = []

    /// Reads once which of `records` wait aside, and their stored metadata.
    static func begin(_ records: [CloudRecord], in db: Database) throws -> ApplyingPage {
        let page = ApplyingPage()
        page.mayWait = try waiting(among: records, in: db)
        let names = Set(records.compactMap { RecordName($0.id.name) })
        page.prefetched = try RecordMetadata.fetchAll(names, in: db)
        page.unread = names
        return page
    }

    /// Which of `records` may be stored aside, with their record or their content: every
    /// name stored aside, when there are no more of them than the page has records (the usual
    /// case: a few records waiting for a parent, or none), read in one pass over the two small
    /// tables; otherwise those of `records`, looked up one by one by the tables' keys in one
    /// statement. A name stored aside that is not the page's costs nothing: only the page's
    /// records are asked about.
    ///
    /// Looking up every record of the page (its name as JSON, three `json_extract` calls and
    /// two index probes each) cost 8 % of applying a page while even one record waited.
    static func waiting(among records: [CloudRecord], in db: Database) throws -> Set<CloudRecordID> {
        guard !records.isEmpty else { return [] }
        let stored = try db.fetchAll(
            sql: """
                SELECT zoneName, ownerName, recordName FROM \(MetadatabaseTable.unsyncedRecords.qualifiedName)
                UNION ALL
                SELECT zoneName, ownerName, recordName FROM \(MetadatabaseTable.waitingContent.qualifiedName)
                LIMIT ?
                """,
            arguments: [records.count + 1], recordID)
        if stored.count <= records.count { return Set(stored) }
        var wanted = JSONWriter(capacity: records.count * 64)
        wanted.array(records) { writer, record in
            writer.byte("[")
            writer.string(record.id.zone.name)
            writer.byte(",")
            writer.string(record.id.zone.owner)
            writer.byte(",")
            writer.string(record.id.name)
            writer.byte("]")
        }
        let found = try db.fetchAll(
            sql: """
                SELECT waiting.zoneName, waiting.ownerName, waiting.recordName
                FROM json_each(?1) AS wanted CROSS JOIN \(MetadatabaseTable.unsyncedRecords.qualifiedName) AS waiting
                WHERE waiting.zoneName = json_extract(wanted.value, '$[0]') AND waiting.ownerName = json_extract(wanted.value, '$[1]')
                    AND waiting.recordName = json_extract(wanted.value, '$[2]')
                UNION
                SELECT waiting.zoneName, waiting.ownerName, waiting.recordName
                FROM json_each(?1) AS wanted CROSS JOIN \(MetadatabaseTable.waitingContent.qualifiedName) AS waiting
                WHERE waiting.zoneName = json_extract(wanted.value, '$[0]') AND waiting.ownerName = json_extract(wanted.value, '$[1]')
                    AND waiting.recordName = json_extract(wanted.value, '$[2]')
                """,
            arguments: [wanted.text], recordID)
        return Set(found)
    }

    private static func recordID(_ row: Row) throws -> CloudRecordID {
        CloudRecordID(name: try row[2], zone: CloudZoneID(name: try row[0], owner: try row[1]))
    }

    /// Whether `id` may be stored aside, so that applying it must forget it there.
    func mayBeWaiting(_ id: CloudRecordID) -> Bool {
        mayWait.contains(id)
    }

    /// A record of the pass was kept aside.
    func keptAside(_ id: CloudRecordID) {
        mayWait.insert(id)
    }

    /// The stored metadata of a record of the page, as it was when the page began: `.some`
    /// (nil when there was none) the first time, and nil afterwards, when the caller must read
    /// it again (a record twice in one page sees what the first wrote).
    func storedMetadata(_ name: RecordName) -> RecordMetadata?? {
        guard unread.remove(name) != nil else { return nil }
        return .some(prefetched.removeValue(forKey: name))
    }

    /// Whether writing a row of `table` needs a savepoint of its own, so that a failing write
    /// can be undone alone and the record quarantined.
    ///
    /// One `INSERT` or `UPDATE` of one row needs none: "ABORT … backs out any changes made by
    /// the current SQL statement; but changes caused by prior SQL statements within the same
    /// transaction are preserved and the transaction remains active" (SQLite, ON CONFLICT),
    /// which is SQLite's default. Only the user's own triggers (whose `RAISE(FAIL)` keeps what
    /// they wrote before it) and a constraint declared `ON CONFLICT FAIL` can leave part of a
    /// failed statement behind: tables with either keep the savepoint.
    func needsSavepoint(_ table: SyncedTable, in db: Database) throws -> Bool {
        if let known = savepointNeeded[table.name] { return known }
        let needed =
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (
                        SELECT 1 FROM main.sqlite_master
                        WHERE (type = 'trigger' AND tbl_name = ?1 AND substr(name, 1, length(?2)) <> ?2)
                            OR (type = 'table' AND name = ?1 AND upper(sql) LIKE '%FAIL%'))
                    """,
                arguments: [table.name, CaptureTriggers.namePrefix]) ?? true
        savepointNeeded[table.name] = needed
        return needed
    }

    /// Whether the row exists, asking SQLite only about rows not seen yet.
    func rowExists(_ name: RecordName, schema: SyncSchema, in db: Database) throws -> Bool {
        if existingRows.contains(name) { return true }
        guard try IncomingChanges.rowExists(name, schema: schema, in: db) else { return false }
        existingRows.insert(name)
        return true
    }

    /// A row the pass wrote.
    func written(_ name: RecordName) {
        existingRows.insert(name)
    }
}
