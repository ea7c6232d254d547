import StrataSQLite

/// Whether a send drains a long change log as it goes, and how much at a time.
///
/// A send drains the log into the metadatabase before it builds a batch. With a long log (a
/// first upload, a device that was offline), draining everything first left the cloud idle:
/// 16 µs a record on the device (issue #27), a second and a half at 100,000 records, while
/// the service and PostgreSQL waited for the first request. Instead, a send that starts on a
/// long log drains one stretch, sends it, and drains the next stretch while its requests
/// travel (``SyncEngine`` after recording each batch's answers). A write of the app's during
/// such a send lands at the end of the log and may change a row drained already: the rest of
/// the log is then drained whole at once.
///
/// What a stretch may hold is what keeps a local transaction whole: each stretch ends where a
/// local transaction ends (``ChangeLogDrain/drainBatch(in:schema:zone:node:policies:clock:limit:wholeTransactions:)``),
/// except inside a transaction longer than two stretches, which goes to the cloud in pieces
/// anyway.
/// A batch reads its rows as they are now, though, and a row edited again further down the
/// log would carry that later edit to the cloud before the rest of its transaction was even
/// drained. So a send drains as it goes only when no record waits from before and no record
/// is named twice in the log; otherwise it drains everything first, as it always did.
enum DrainWhileSending {
    /// How many log entries one stretch takes: half a batch more than a batch. Each batch's
    /// answers bring one stretch and let one batch go, so the drained records stay ahead of
    /// the batches without the device draining far ahead while the cloud waits for its next
    /// request. A transaction cut between stretches is longer than a request.
    static func stretch(batchSize: Int) -> Int { max(500, max(1, batchSize) + max(1, batchSize) / 2) }

    /// Whether a send starting now may drain as it goes: the log holds more than one stretch,
    /// no record waits from before, and no record has two entries left in the log. Read in
    /// the caller's transaction, on the writer.
    static func applies(stretch: Int, in db: Database) throws -> Bool {
        let drained = try ChangeLogDrain.drainedThrough(in: db)
        // Past one stretch, by the log's own key: nothing is counted on a short log (a push).
        let beyond = try Int64.fetchOne(
            db, sql: "SELECT sequence FROM main.\(ChangeLog.tableName) WHERE sequence > ? ORDER BY sequence LIMIT 1 OFFSET ?",
            arguments: [drained, stretch])
        guard beyond != nil else { return false }
        let waiting = try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE pendingOperation IS NOT NULL)")
        guard waiting == false else { return false }
        let namedTwice = try Bool.fetchOne(
            db,
            sql: """
                SELECT EXISTS (
                    SELECT 1 FROM main.\(ChangeLog.tableName) WHERE sequence > ?
                    GROUP BY tableName, primaryKey HAVING count(*) > 1)
                """,
            arguments: [drained])
        return namedTwice == false
    }
}
