import StrataSQLite

/// What applying one page of records learns as it goes, so that each record of the page does
/// not ask SQLite again: the rows known to exist (parents are applied before their children,
/// and many children share one), and whether any record waits aside at all.
///
/// Valid for one pass over a page's records, inside its transaction: applying records only
/// inserts and updates rows, so a row seen is still there at the end of the pass.
final class ApplyingPage {
    private var existingRows: Set<RecordName> = []
    /// The stored metadata of the page's records, read in one statement; each is taken once.
    private var prefetched: [RecordName: RecordMetadata] = [:]
    private var unread: Set<RecordName> = []
    private var savepointNeeded: [String: Bool] = [:]
    /// False when neither waiting records nor their content were stored when the page began
    /// and none was kept aside since: applying a record then has nothing to forget.
    var waitingMayExist: Bool

    init(waitingMayExist: Bool) {
        self.waitingMayExist = waitingMayExist
    }

    /// Reads once whether records wait aside, and the stored metadata of `records`.
    static func begin(_ records: [CloudRecord], in db: Database) throws -> ApplyingPage {
        let waiting = try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (SELECT 1 FROM \(MetadatabaseTable.unsyncedRecords.qualifiedName))
                    OR EXISTS (SELECT 1 FROM \(MetadatabaseTable.waitingContent.qualifiedName))
                """)
        let page = ApplyingPage(waitingMayExist: waiting ?? true)
        let names = Set(records.compactMap { RecordName($0.id.name) })
        page.prefetched = try RecordMetadata.fetchAll(names, in: db)
        page.unread = names
        return page
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
