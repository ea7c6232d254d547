import CSQLite
import Foundation

/// Collects the tables a writer's transaction changes and announces them after the commit.
///
/// Lives on the writer connection and is only touched from its queue. The update hook fires
/// once per changed row, so its fast path is one atomic load when nobody observes, and one
/// `strcmp` against the previous row's table when someone does.
final class ChangeTracker {
    let hub: DatabaseChangeHub
    private var changedTables: Set<QualifiedTable> = []
    private var lastTableName: UnsafePointer<CChar>?
    private var lastSchemaName: UnsafePointer<CChar>?
    private var didCommit = false

    init(hub: DatabaseChangeHub) {
        self.hub = hub
    }

    func install(on handle: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(handle, { context, _, schema, table, _ in
            guard let context, let schema, let table else { return }
            Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue().rowChanged(schema: schema, table: table)
        }, context)
        sqlite3_commit_hook(handle, { context in
            guard let context else { return 0 }
            Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue().didCommit = true
            return 0  // zero lets the commit proceed
        }, context)
        sqlite3_rollback_hook(handle, { context in
            guard let context else { return }
            Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue().rolledBack()
        }, context)
    }

    static func uninstall(from handle: OpaquePointer) {
        sqlite3_update_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
    }

    private func rowChanged(schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>) {
        guard hub.hasObservers else { return }
        if let lastTableName, let lastSchemaName, strcmp(lastTableName, table) == 0, strcmp(lastSchemaName, schema) == 0 {
            return
        }
        let qualified = QualifiedTable(schema: String(cString: schema), name: String(cString: table))
        changedTables.insert(qualified)
        // The pointers belong to SQLite's schema objects and are only compared within the
        // current transaction, during which they stay valid.
        lastTableName = table
        lastSchemaName = schema
    }

    /// A statement that writes these tables is about to run.
    func statementWillWrite(_ tables: Set<QualifiedTable>) {
        guard hub.hasObservers else { return }
        changedTables.formUnion(tables)
    }

    private func rolledBack() {
        changedTables.removeAll()
        lastTableName = nil
        lastSchemaName = nil
        didCommit = false
    }

    /// Called after each job on the writer: announces what the job's commits changed.
    ///
    /// Announcing after the job rather than inside the commit hook matters: in the hook the
    /// commit has not happened yet, and a reader started from there could miss it.
    func flush(isInsideTransaction: Bool) {
        guard didCommit, !isInsideTransaction else { return }
        didCommit = false
        let tables = changedTables
        changedTables.removeAll(keepingCapacity: true)
        lastTableName = nil
        lastSchemaName = nil
        hub.notifyCommit(changedTables: tables)
    }
}

extension Database {
    /// Makes this connection the writer that announces its commits to `hub`.
    func installChangeTracking(hub: DatabaseChangeHub) {
        let tracker = ChangeTracker(hub: hub)
        tracker.install(on: handle)
        changeTracker = tracker
        disablesTruncateOptimization = true
    }

    /// Announces the commits of the job that just ended.
    func jobDidEnd() {
        changeTracker?.flush(isInsideTransaction: isInsideTransaction)
    }
}
