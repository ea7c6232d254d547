import CSQLite
import Foundation

/// Collects the tables a writer's transactions change and announces them after the job that
/// committed them.
///
/// Lives on the writer connection and is only touched from its queue. The update hook fires
/// once per changed row, so its fast path is one atomic load when nobody observes, and a
/// `strcmp` against the two tables seen last when someone does: two, because a row and the
/// row a trigger writes for it (a sync change log, an audit table) alternate.
///
/// Two sets, because one job can commit and then roll back: `writeWithoutTransaction` that
/// commits a transaction and rolls back a second one, an autocommitted statement followed by a
/// failing one, a migrator whose first migration commits and second fails. A rollback undoes
/// only the open transaction's changes (``transactionTables``); what an earlier commit of the
/// same job changed (``committedTables``) stays announced.
final class ChangeTracker {
    let hub: DatabaseChangeHub
    /// Tables changed by the transaction that is open now.
    private var transactionTables: Set<QualifiedTable> = []
    /// Tables changed by the transactions the current job committed.
    private var committedTables: Set<QualifiedTable> = []
    private var recentTables = RecentTables()
    private var hasCommitted = false

    init(hub: DatabaseChangeHub) {
        self.hub = hub
    }

    func rowChanged(schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>) {
        guard hub.hasObservers else { return }
        if recentTables.contains(schema: schema, table: table) { return }
        let qualified = QualifiedTable(schema: String(cString: schema), name: String(cString: table))
        transactionTables.insert(qualified)
        recentTables.remember(schema: schema, table: table)
    }

    /// A statement that writes these tables is about to run.
    func statementWillWrite(_ tables: Set<QualifiedTable>) {
        guard hub.hasObservers else { return }
        transactionTables.formUnion(tables)
    }

    /// The commit hook fired: the open transaction's changes are about to be durable.
    ///
    /// Should the commit still fail (SQLite then rolls back or leaves the transaction open),
    /// the tables are announced anyway: a needless re-fetch is harmless, a missed one is not.
    func transactionWillCommit() {
        committedTables.formUnion(transactionTables)
        transactionTables.removeAll(keepingCapacity: true)
        forgetLastTable()
        hasCommitted = true
    }

    /// The rollback hook fired: the open transaction's changes are gone, earlier commits stay.
    func transactionDidRollback() {
        transactionTables.removeAll(keepingCapacity: true)
        forgetLastTable()
    }

    private func forgetLastTable() {
        recentTables = RecentTables()
    }

    /// Called after each job on the writer: announces what the job's commits changed.
    ///
    /// Announcing after the job rather than inside the commit hook matters: in the hook the
    /// commit has not happened yet, and a reader started from there could miss it. A job that
    /// leaves a transaction open announces at the end of the job that closes it.
    func flush(isInsideTransaction: Bool) {
        guard hasCommitted, !isInsideTransaction else { return }
        hasCommitted = false
        let tables = committedTables
        committedTables.removeAll(keepingCapacity: true)
        hub.notifyCommit(changedTables: tables, allowingInlineReads: true)
    }
}

extension Database {
    /// Makes this connection the writer that announces its commits to `hub`.
    func installChangeTracking(hub: DatabaseChangeHub) {
        changeTracker = ChangeTracker(hub: hub)
        installHooksIfNeeded()
        disablesTruncateOptimization = true
    }

    /// Announces the commits of the job that just ended.
    func jobDidEnd() {
        changeTracker?.flush(isInsideTransaction: isInsideTransaction)
    }
}

/// The two tables the update hook reported last, by SQLite's own name pointers.
///
/// The pointers belong to SQLite's schema objects and are only compared within the current
/// transaction, during which they stay valid; the tracker forgets them when it ends.
private struct RecentTables {
    private var last: (schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>)?
    private var previous: (schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>)?

    func contains(schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>) -> Bool {
        if let last, strcmp(last.table, table) == 0, strcmp(last.schema, schema) == 0 { return true }
        if let previous, strcmp(previous.table, table) == 0, strcmp(previous.schema, schema) == 0 { return true }
        return false
    }

    mutating func remember(schema: UnsafePointer<CChar>, table: UnsafePointer<CChar>) {
        previous = last
        last = (schema, table)
    }
}
