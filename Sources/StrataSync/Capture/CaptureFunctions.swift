import StrataSQLite

/// Whether the current task runs the sync engine's own writes. Triggers read it through the SQL
/// function `strata_sync_is_synchronizing()` and skip those writes; users can filter their own
/// triggers and traces the same way.
enum SynchronizationContext {
    @TaskLocal static var isSynchronizing = false
}

/// The SQL functions capture triggers call, installed on the writer.
enum CaptureFunctions {
    static let isSynchronizing = "strata_sync_is_synchronizing"
    static let version = "strata_sync_version"
    static let transaction = "strata_sync_transaction"

    /// Installs the functions on `db`.
    ///
    /// - Parameters:
    ///   - clock: issues each change's version.
    ///   - transactions: numbers the local transactions (see ``TransactionCounter``).
    static func install(on db: Database, clock: HybridLogicalClock, transactions: TransactionCounter) throws {
        // The same function users add to other connections for their triggers.
        try db.add(function: SyncEngine.$isSynchronizingChanges)
        try db.add(
            function: DatabaseFunction(version) { () -> Int64 in
                clock.nextPackedTime()
            })
        try db.add(
            function: DatabaseFunction(transaction) { () -> Int64 in
                transactions.numberForLoggedChange()
            })
    }
}
