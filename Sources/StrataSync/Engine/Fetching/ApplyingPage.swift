import StrataSQLite

/// What applying one page of records learns as it goes, so that each record of the page does
/// not ask SQLite again: the rows known to exist (parents are applied before their children,
/// and many children share one), and which records wait aside.
///
/// Valid for one pass over a page's records, inside its transaction: applying records only
/// inserts and updates rows, so a row seen is still there at the end of the pass.
final class ApplyingPage {
    private var existingRows: Set<RecordName> = []
    /// The stored metadata of the page's records, read in one statement; each is taken once.
    private var prefetched: [RecordName: RecordMetadata] = [:]
    private var unread: Set<RecordName> = []
    private var savepointNeeded: [String: Bool] = [:]
    /// The records waiting aside (or with content kept for them) when the page began, and
    /// those kept aside since; nil when there were too many to read for every page, and any
    /// record may be waiting.
    private var waiting: Set<CloudRecordID>?

    /// More waiting records than this are not read for each page: a record applied then asks
    /// SQLite whether it waited, as before.
    static let waitingReadLimit = 1_000

    init(waiting: Set<CloudRecordID>?) {
        self.waiting = waiting
    }

    /// Reads once which records wait aside, and the stored metadata of `records`.
    static func begin(_ records: [CloudRecord], in db: Database) throws -> ApplyingPage {
        let waiting = try db.fetchAll(
            sql: """
                SELECT zoneName, ownerName, recordName FROM \(MetadatabaseTable.unsyncedRecords.qualifiedName)
                UNION SELECT zoneName, ownerName, recordName FROM \(MetadatabaseTable.waitingContent.qualifiedName)
                LIMIT \(waitingReadLimit + 1)
                """
        ) { row in CloudRecordID(name: try row[2], zone: CloudZoneID(name: try row[0], owner: try row[1])) }
        let page = ApplyingPage(waiting: waiting.count > waitingReadLimit ? nil : Set(waiting))
        let names = Set(records.compactMap { RecordName($0.id.name) })
        page.prefetched = try RecordMetadata.fetchAll(names, in: db)
        page.unread = names
        return page
    }

    /// Whether `id` may wait aside, so that applying it must forget it there: with none
    /// waiting (a first sync's every page), a record applied asks SQLite nothing; a page after
    /// one record waited asked two deletes of every other record of the page (8 % of applying
    /// a page).
    func mayWait(_ id: CloudRecordID) -> Bool {
        waiting?.contains(id) ?? true
    }

    /// A record kept aside while the page is applied.
    func keptAside(_ id: CloudRecordID) {
        waiting?.insert(id)
    }

    /// A record no longer waiting.
    func forgot(_ id: CloudRecordID) {
        waiting?.remove(id)
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
