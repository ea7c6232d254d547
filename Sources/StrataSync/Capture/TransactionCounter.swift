import StrataSQLite
import Synchronization

/// Numbers the writer's transactions, so the log can tell which changes one local transaction
/// made (they are sent together, and another device never sees half of a transaction).
///
/// A listener of the writer's commits and rollbacks: each ends the current number.
///
/// It also tells when a committed transaction logged changes (``onLoggedCommit``): what wakes a
/// running engine to send, instead of a timer that polls the log.
final class TransactionCounter: TransactionListener, Sendable {
    private let value: Atomic<Int64>
    private let loggedInCurrent = Atomic<Bool>(false)
    private let onLoggedCommit: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - first: the first number to hand out; above every number already in the log, so
    ///     transactions of an earlier launch are never merged with new ones.
    ///   - onLoggedCommit: called after a transaction that logged changes committed.
    init(first: Int64, onLoggedCommit: (@Sendable () -> Void)? = nil) {
        value = Atomic(first)
        self.onLoggedCommit = onLoggedCommit
    }

    /// The number of the open transaction, for a change being logged in it.
    func numberForLoggedChange() -> Int64 {
        loggedInCurrent.store(true, ordering: .relaxed)
        return value.load(ordering: .relaxed)
    }

    /// Only transaction ends matter; rows would cost a `RowChange` each.
    var observesRowChanges: Bool { false }

    /// The number of the transaction open now.
    var current: Int64 { value.load(ordering: .relaxed) }

    func transactionDidCommit(_ db: Database) {
        value.add(1, ordering: .relaxed)
        if loggedInCurrent.exchange(false, ordering: .relaxed) { onLoggedCommit?() }
    }

    func transactionDidRollback(_ db: Database) {
        value.add(1, ordering: .relaxed)
        loggedInCurrent.store(false, ordering: .relaxed)
    }
}
