import StrataSQLite

/// Records every local change to the synced tables in the `ChangeLog`, in the writing
/// transaction, from every connection that writes the file (see `CaptureTriggers`).
///
/// Install it in `Configuration.prepareDatabase` on connections that write (the sync engine
/// does this for you):
///
/// ```swift
/// configuration.prepareDatabase { db in
///     if db.role.canWrite { try capture.install(on: db) }
/// }
/// ```
package final class ChangeCapture: Sendable {
    /// The names of the synced tables.
    package let tableNames: [String]
    /// Issues each change's version.
    package let clock: HybridLogicalClock
    private let onLoggedCommit: (@Sendable () -> Void)?

    /// Capture for the named tables, versioned by `clock`; nothing is installed until ``install(on:)``.
    package convenience init(tables: [String], clock: HybridLogicalClock) {
        self.init(tables: tables, clock: clock, onLoggedCommit: nil)
    }

    /// Capture that also calls `onLoggedCommit` after each transaction that logged changes
    /// commits (on the writer's thread: keep it short).
    package init(tables: [String], clock: HybridLogicalClock, onLoggedCommit: (@Sendable () -> Void)?) {
        self.tableNames = tables
        self.clock = clock
        self.onLoggedCommit = onLoggedCommit
    }

    /// Validates the synced tables, creates the change log and installs the functions and
    /// triggers on a connection that writes.
    ///
    /// - Returns: the validated schema.
    /// - Throws: ``SyncSchemaError`` naming the table and column that break a rule of sync.
    @discardableResult
    package func install(on db: Database) throws -> SyncSchema {
        let schema = try SyncSchema.read(tables: tableNames, in: db)
        try ChangeLog.create(in: db)
        try CaptureClockFloor.create(in: db)
        try CaptureFunctions.install(on: db, session: CaptureSession(clock: clock, onLoggedCommit: onLoggedCommit))
        try CaptureTriggers.inOneTransaction(db) {
            try CaptureTables.record(tableNames, in: db)
            try CaptureTriggers.dropTriggers(ofTablesOtherThan: schema.tables.map(\.name), in: db)
            try CaptureTriggers.synchronize(schema.tables, in: db)
        }
        return schema
    }

    /// Runs `body` as the sync engine's own work: the triggers do not log what it writes.
    package static func withoutCapture<T>(_ body: () throws -> T) rethrows -> T {
        try SynchronizationContext.$isSynchronizing.withValue(true, operation: body)
    }

    /// The async variant of ``withoutCapture(_:)``: the task-local reaches the writer's
    /// connection through `write`.
    package static func withoutCapture<T>(_ body: () async throws -> T) async rethrows -> T {
        try await SynchronizationContext.$isSynchronizing.withValue(true, operation: body)
    }

    /// Whether the current task runs the sync engine's own writes.
    package static var isSynchronizing: Bool { SynchronizationContext.isSynchronizing }
}
