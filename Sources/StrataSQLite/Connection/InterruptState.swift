import CSQLite
import Synchronization

/// The part of a connection other threads may touch: a cancellation request and
/// `sqlite3_interrupt`, which SQLite documents as safe to call from any thread while the
/// connection is open.
final class InterruptState: Sendable {
    private struct State {
        var isOpen = true
        var currentJob: UInt64 = 0
        var cancelledJob: UInt64 = 0
    }

    private let state = Mutex(State())
    /// Mirrors "the running job was cancelled", written under the lock and read without it:
    /// every statement execution checks it, and a lock round-trip there would cost every
    /// fetch and insert, cancelled or not.
    private let runningJobCancelled = Atomic<Bool>(false)
    // Safe to share: it is only passed to `sqlite3_interrupt`, which SQLite documents as safe
    // to call from any thread, and only while `isOpen` holds under the lock (after close, the
    // pointer may dangle).
    nonisolated(unsafe) private let handle: OpaquePointer

    init(handle: OpaquePointer) {
        self.handle = handle
    }

    /// Marks the start of a job; returns its token.
    func beginJob(_ token: UInt64) {
        state.withLock {
            $0.currentJob = token
            $0.cancelledJob = 0
            runningJobCancelled.store(false, ordering: .releasing)
        }
    }

    func endJob() {
        state.withLock {
            $0.currentJob = 0
            $0.cancelledJob = 0
            runningJobCancelled.store(false, ordering: .releasing)
        }
    }

    /// Cancels the job with this token if it is the one running now: later statements of the
    /// job throw `CancellationError`, and the statement in progress is interrupted. A job that
    /// has not started yet is not touched; it checks `Task.isCancelled` when it starts.
    func cancel(job token: UInt64) {
        state.withLock {
            guard $0.currentJob == token, token != 0, $0.isOpen else { return }
            $0.cancelledJob = token
            runningJobCancelled.store(true, ordering: .releasing)
            sqlite3_interrupt(handle)
        }
    }

    /// Interrupts whatever statement runs now, whoever started it.
    func interruptAll() {
        state.withLock {
            if $0.isOpen { sqlite3_interrupt(handle) }
        }
    }

    var isCancellationRequested: Bool {
        runningJobCancelled.load(ordering: .acquiring)
    }

    /// The token of the job running now; 0 outside a job that has one.
    var runningJob: UInt64 {
        state.withLock { $0.currentJob }
    }

    func close() {
        state.withLock { $0.isOpen = false }
    }
}

/// One job of a connection, to cancel from another thread while it runs: what cancelling the
/// task of an async `read` does, for a job started without a task (`asyncRead`,
/// `readAfterCommit`), such as an observer's fetch.
package struct DatabaseJob: Sendable {
    fileprivate let interruptState: InterruptState
    fileprivate let token: UInt64

    /// Cancels the job if it still runs: its running statement is interrupted, and it and every
    /// later statement of the job throw `CancellationError`. A job that has ended is not touched.
    package func cancel() {
        interruptState.cancel(job: token)
    }
}

extension Database {
    /// The job running on this connection now, which another thread may cancel; nil outside a
    /// job that can be cancelled (a synchronous access).
    package var currentJob: DatabaseJob? {
        let token = interruptState.runningJob
        return token == 0 ? nil : DatabaseJob(interruptState: interruptState, token: token)
    }
}
