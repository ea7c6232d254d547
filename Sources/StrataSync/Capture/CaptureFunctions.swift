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
    /// Triggers of earlier versions call it; a file keeps them until a connection of this version
    /// rebuilds them (an engine that starts, or a connection that mends them).
    static let textKey = "strata_sync_text_key"
    /// `strata_sync_captures_key(key, table, column)`: 0 for the engine's own writes, else
    /// ``textKey``'s answer. A trigger's `WHEN` makes one call for both.
    static let capturesKey = "strata_sync_captures_key"

    /// Installs the functions on `db`, replacing earlier ones, with `session` numbering its
    /// transactions and versioning its changes.
    ///
    /// Each is an integer function (`Database.addIntegerFunction`): triggers call them on every
    /// row a synced table gains, where a ``DatabaseFunction``'s boxed arguments and result
    /// cost more than the rest of the call.
    static func install(on db: Database, session: CaptureSession) throws {
        // What users add to other connections as `SyncEngine.$isSynchronizingChanges`, without
        // its boxing: the update and delete triggers call it on every row they log.
        try db.addIntegerFunction(named: isSynchronizing, argumentCount: 0) { _ in SynchronizationContext.isSynchronizing ? 1 : 0 }
        try db.addIntegerFunction(named: version, argumentCount: 0) { _ in session.nextVersion() }
        try db.addIntegerFunction(named: beginTransaction, argumentCount: 3) { arguments in
            session.begin(lastTransaction: arguments.int64(at: 0), lastVersion: arguments.int64(at: 1), floor: arguments.int64(at: 2))
        }
        try db.addIntegerFunction(named: transaction, argumentCount: 0) { _ in session.currentTransaction }
        try db.addTextKeyGuard(named: textKey)
        try db.addTextKeyGuard(named: capturesKey, skippedWhen: { SynchronizationContext.isSynchronizing })
        db.add(transactionListener: session)
        // Another program may rebuild a synced table, or rename a column: the next write here
        // finds the triggers mended first.
        db.setSchemaChangeHook("strata_sync_capture") { db in try CaptureTriggers.mend(in: db) }
        // Migrations applied here take the triggers down and build them again around each.
        CaptureTriggers.installMigrationHook(on: db)
    }
}
