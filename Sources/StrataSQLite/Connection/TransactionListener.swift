import CSQLite

/// Receives the transaction events of one connection: changed rows, commits and rollbacks.
///
/// SQLite has one slot for each of its update, commit and rollback hooks; Strata keeps those
/// slots for itself and fans their events out, so any number of listeners (observation, the
/// sync engine, your own) coexist on a connection. Add one with
/// ``Database/add(transactionListener:)``, typically in `Configuration.prepareDatabase` on the
/// writer (check ``Database/role``).
///
/// Every method runs on the connection's executor, in the middle of SQLite's work: none may use
/// the connection (no statement, no `execute`), except ``transactionDidCommit(_:)`` and
/// ``transactionDidRollback(_:)``, which run once the statement that ended the transaction has
/// returned.
public protocol TransactionListener: AnyObject {
    /// Whether ``rowDidChange(_:)`` should be called. Return false when only commits and
    /// rollbacks matter: the update hook fires once per changed row (trigger writes included),
    /// and skipping the ``RowChange`` it would build for this listener keeps that path free.
    /// Read once, when the listener is added.
    var observesRowChanges: Bool { get }

    /// A row was inserted, updated or deleted (SQLite's update hook). Rows of `WITHOUT ROWID`
    /// tables and rows deleted by `REPLACE` conflict resolution are not reported; that is
    /// SQLite's rule.
    func rowDidChange(_ change: RowChange)

    /// The transaction is about to commit (SQLite's commit hook). Throw to refuse the commit:
    /// the transaction is rolled back and the `COMMIT` fails with `SQLITE_CONSTRAINT_COMMITHOOK`.
    func transactionWillCommit() throws

    /// A transaction committed; called after the statement that committed it returned.
    func transactionDidCommit(_ db: Database)

    /// A transaction rolled back; called after the statement that rolled it back returned (or
    /// failed).
    func transactionDidRollback(_ db: Database)
}

extension TransactionListener {
    /// True: the listener hears of every row change.
    public var observesRowChanges: Bool { true }
    /// Does nothing: implement only the events you need.
    public func rowDidChange(_ change: RowChange) {}
    /// Allows the commit.
    public func transactionWillCommit() throws {}
    /// Does nothing.
    public func transactionDidCommit(_ db: Database) {}
    /// Does nothing.
    public func transactionDidRollback(_ db: Database) {}
}

/// One row change reported to a ``TransactionListener``.
public struct RowChange: Sendable, Hashable {
    /// What happened to the row.
    public enum Kind: Sendable, Hashable {
        case insert, update, delete
    }

    /// What happened to the row.
    public var kind: Kind
    /// The schema of the table: `main`, `temp` or an attached database's name.
    public var schemaName: String
    /// The table's name.
    public var tableName: String
    /// The row's rowid.
    public var rowID: Int64

    /// A change, for tests of a listener.
    public init(kind: Kind, schemaName: String, tableName: String, rowID: Int64) {
        self.kind = kind
        self.schemaName = schemaName
        self.tableName = tableName
        self.rowID = rowID
    }
}
