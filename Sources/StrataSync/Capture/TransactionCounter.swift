import StrataSQLite
import Synchronization

/// Numbers the writer's transactions, so the log can tell which changes one local transaction
/// made (they are sent together, and another device never sees half of a transaction).
///
/// A listener of the writer's commits and rollbacks: each ends the current number.
final class TransactionCounter: TransactionListener, Sendable {
    private let value: Atomic<Int64>

    /// - Parameter first: the first number to hand out; above every number already in the log,
    ///   so transactions of an earlier launch are never merged with new ones.
    init(first: Int64) {
        value = Atomic(first)
    }

    /// Only transaction ends matter; rows would cost a `RowChange` each.
    var observesRowChanges: Bool { false }

    /// The number of the transaction open now.
    var current: Int64 { value.load(ordering: .relaxed) }

    func transactionDidCommit(_ db: Database) {
        value.add(1, ordering: .relaxed)
    }

    func transactionDidRollback(_ db: Database) {
        value.add(1, ordering: .relaxed)
    }
}
