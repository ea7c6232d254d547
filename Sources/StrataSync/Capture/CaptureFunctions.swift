import StrataSQLite

/// Whether the current task runs the sync engine's own writes. Triggers read it through the SQL
/// function `strata_sync_is_synchronizing()` and skip those writes; users can filter their own
/// triggers and traces the same way.
enum SynchronizationContext {
    @TaskLocal static var isSynchronizing = false
}

/// The SQL functions the capture triggers call. The triggers live in the user's file and fire
/// on every connection that writes it, so every Strata connection that writes a synced file
/// needs these: the engine installs them on its writer with its clock, and
/// `Database.addSyncCaptureFunctions()` on any other (`defaultDatabase()` calls it).
enum CaptureFunctions {
    static let isSynchronizing = "strata_sync_is_synchronizing"
    static let version = "strata_sync_version"
    static let beginTransaction = "strata_sync_begin_transaction"
    static let transaction = "strata_sync_transaction"
    /// `strata_sync_text_key(key, table, column)`: 1 when the key is valid UTF-8 text; else the
    /// write fails, naming the table and the column (`Database.addTextKeyGuard(named:)`).
    static let textKey = "strata_sync_text_key"

    /// Installs the functions on `db`, replacing earlier ones, with `session` numbering its
    /// transactions and versioning its changes.
    static func install(on db: Database, session: CaptureSession) throws {
        // The same function users add to other connections for their triggers.
        try db.add(function: SyncEngine.$isSynchronizingChanges)
        try db.add(function: DatabaseFunction(version, argumentCount: 0) { _ in session.nextVersion() })
        try db.add(
            function: DatabaseFunction(beginTransaction, argumentCount: 3) { values in
                session.begin(lastTransaction: values[0].int64Value, lastVersion: values[1].int64Value, floor: values[2].int64Value)
            })
        try db.add(function: DatabaseFunction(transaction, argumentCount: 0) { _ in session.currentTransaction })
        try db.addTextKeyGuard(named: textKey)
        db.add(transactionListener: session)
        // Another program may rebuild a synced table, or rename a column: the next write here
        // finds the triggers mended first.
        db.setSchemaChangeHook("strata_sync_capture") { db in try CaptureTriggers.mend(in: db) }
        // Migrations applied here take the triggers down and build them again around each.
        CaptureTriggers.installMigrationHook(on: db)
    }
}

extension DatabaseValue {
    fileprivate var int64Value: Int64? {
        if case .integer(let value) = self { value } else { nil }
    }
}
