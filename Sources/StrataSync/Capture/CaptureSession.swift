import StrataSQLite
import Synchronization

/// One connection's share of change capture: the number of the local transaction open on it
/// and the clock that versions its changes.
///
/// Every process that writes the file logs into the same change log, so a transaction's
/// number and its first version are taken from the log itself when the transaction logs its
/// first change (the capture triggers pass the log's last entry, read under the write lock
/// that transaction holds): numbers then grow in commit order across connections and
/// processes, and two transactions never share one. Versions continue from the log's last
/// entry and from the clock floor the engine keeps in the file (`CaptureClockFloor`), so a
/// change made in another process after this device received an edit orders after that edit,
/// whatever that process's wall clock says.
///
/// A listener of the connection's commits and rollbacks: each ends the transaction.
final class CaptureSession: TransactionListener, Sendable {
    /// The clock that versions this connection's changes: the engine's on its writer, one of
    /// the connection's own elsewhere.
    let clock: HybridLogicalClock
    private let openTransaction = Mutex<Int64?>(nil)
    private let onLoggedCommit: (@Sendable () -> Void)?

    /// - Parameter onLoggedCommit: called after a transaction that logged changes committed.
    init(clock: HybridLogicalClock, onLoggedCommit: (@Sendable () -> Void)? = nil) {
        self.clock = clock
        self.onLoggedCommit = onLoggedCommit
    }

    /// The version of a change logged in the open transaction, or nil before the transaction's
    /// first change (the trigger then calls ``begin(lastTransaction:lastVersion:floor:)``).
    func nextVersion() -> Int64? {
        openTransaction.withLock { $0 } == nil ? nil : clock.nextPackedTime()
    }

    /// Opens the transaction's numbering at its first logged change, and returns that change's
    /// version.
    ///
    /// - Parameters:
    ///   - lastTransaction: the transaction of the log's last entry, if any.
    ///   - lastVersion: that entry's version.
    ///   - floor: the clock floor the engine keeps in the file.
    func begin(lastTransaction: Int64?, lastVersion: Int64?, floor: Int64?) -> Int64 {
        for packed in [lastVersion, floor].compactMap({ $0 }) where packed >= 0 {
            clock.observeLogged(HybridTimestamp(packedTime: packed, node: clock.node))
        }
        openTransaction.withLock { $0 = (lastTransaction ?? 0) + 1 }
        return clock.nextPackedTime()
    }

    /// The open transaction's number, once a change was logged in it.
    var currentTransaction: Int64? { openTransaction.withLock { $0 } }

    /// Only transaction ends matter; rows would cost a `RowChange` each.
    var observesRowChanges: Bool { false }

    func transactionDidCommit(_ db: Database) {
        if openTransaction.withLock({ $0.take() }) != nil { onLoggedCommit?() }
    }

    func transactionDidRollback(_ db: Database) {
        openTransaction.withLock { $0 = nil }
    }
}
