/// Something that reads a database: a ``DatabaseQueue`` or a ``DatabasePool``.
///
/// Every method names its guarantee:
/// - `read` runs the closure in a read-only transaction, so everything it fetches comes from
///   one consistent snapshot of the database, even while a writer commits.
/// - The async variants run the closure on the connection's own dispatch queue; cancelling the
///   calling task interrupts the running statement and the read or write throws
///   `CancellationError` (a write is rolled back).
/// - The synchronous variants block the calling thread; calling one from inside a closure of the
///   same queue or pool throws ``DatabaseAccessError`` instead of deadlocking.
/// - The `Database` a closure receives is lent to it for the duration of the call, on the
///   thread that runs it. Using it — or a ``Statement`` or ``RecordCursor`` made from it — after
///   the closure has returned (`let db = try pool.read { $0 }` compiles), or from another
///   thread while it runs, stops the process with a message that names the misuse and the
///   access it escaped from: the connection is opened without SQLite's mutex, so the
///   alternative is a silent data race on it. Return the values you need instead.
public protocol DatabaseReader: AnyObject, Sendable {
    /// The configuration the connections were opened with.
    var configuration: Configuration { get }

    /// Where the database lives: a file, a named or a private in-memory database.
    var location: DatabaseLocation { get }

    /// Reads from one snapshot, blocking the calling thread.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    func read<T>(_ body: (Database) throws -> T) throws -> T

    /// Reads from one snapshot.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Reads from one snapshot without waiting and without a task: `read` runs later on a
    /// reader's own queue, inside a read transaction whose snapshot is taken before it starts,
    /// and `completion` receives its result — or the error that kept the read from starting
    /// (a closed database) — on that same queue, once the transaction has ended and the
    /// connection is free for the next read. The call returns at once.
    ///
    /// For work started from a callback that must not block, such as a commit announcement
    /// (``DatabaseWriter/observeChanges(in:onChange:)``): a `read` from there would need a
    /// task (a thread wake-up) and a hop back from the reader. The snapshot includes every
    /// commit that returned before the call. `completion` must not block: it runs on the
    /// reader's queue. An `asyncRead` started from `completion` may get the same reader; it
    /// starts once this job has ended.
    ///
    /// `read`'s `Database` is lent to it alone: used after `read` returns, or from another
    /// thread, it stops the process (see ``Database``).
    func asyncRead<T: Sendable>(
        _ read: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void)

    /// Reads from a snapshot that includes the commit being announced now: at once on the
    /// calling thread when that is cheaper than a hand-off, else as ``asyncRead(_:completion:)``.
    ///
    /// For an observer called by a commit announcement (``DatabaseWriter/observeChanges(in:onChange:)``).
    /// The writer's thread is awake there, and no write can start until the announcement
    /// returns; handing the read to a reader's queue costs a wake-up of another thread, which
    /// a small read does not need. A ``DatabasePool`` runs `read` and `completion` inline, on
    /// an idle reader connection, when `estimatedDuration` (the last run's, say) fits in what
    /// remains of the commit's ``Configuration/inlineObservationBudget`` and no other write
    /// waits for the writer. The write's caller waits for inline reads, so the budget bounds
    /// what observers add to a write. Elsewhere, with no estimate, over budget, or while writes
    /// queue up (where handing off lets the commits made during one fetch collapse into one
    /// follow-up), the read goes to a reader's queue.
    func readAfterCommit<T: Sendable>(
        estimatedDuration: Duration?,
        _ read: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void)

    /// Interrupts every statement running now on any connection (`sqlite3_interrupt`); they fail
    /// with `SQLITE_INTERRUPT`.
    func interrupt()

    /// Closes every connection: idle ones now, busy ones when their access ends. Later
    /// accesses throw ``DatabaseAccessError``. A ``DatabaseQueue`` waits for the access running
    /// on its connection, a ``DatabasePool`` for the running write but never for reads; neither
    /// waits when called from inside one of its own closures.
    func close()
}

/// Something that writes a database: a ``DatabaseQueue`` or a ``DatabasePool``.
///
/// All writes are serialized on a single writer connection.
/// - `write` runs the closure in an `IMMEDIATE` transaction: committed if it returns, rolled
///   back if it throws.
/// - `writeWithoutTransaction` runs the closure outside any transaction, for statements that
///   cannot run in one (`VACUUM`, `PRAGMA journal_mode`, `ATTACH`) or to manage transactions
///   yourself.
/// - `barrierWriteWithoutTransaction` also waits until no read runs and keeps new reads out
///   until it returns: for changes readers must not see half-done, such as erasing the schema.
public protocol DatabaseWriter: DatabaseReader {
    // Like `read`'s, the closures below get a `Database` lent to them alone (see
    // `DatabaseReader`).
    func write<T>(_ body: (Database) throws -> T) throws -> T
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T
    func barrierWriteWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T
    func barrierWriteWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T
}

extension Database {
    /// Runs `body` in a deferred read transaction whose snapshot is taken before `body` starts.
    ///
    /// `BEGIN DEFERRED` alone takes no snapshot until the first read; reading the schema table
    /// right away pins the snapshot to the start of the read, so it cannot include a commit
    /// that happened after `read` was called but before the closure's first query.
    func readInSnapshot<T>(_ body: (Database) throws -> T) throws -> T {
        try execute(sql: "BEGIN DEFERRED TRANSACTION")
        do {
            try execute(sql: "SELECT 1 FROM sqlite_schema LIMIT 1")
            let result = try body(self)
            try execute(sql: "COMMIT TRANSACTION")
            return result
        } catch {
            rollbackIfNeeded()
            throw error
        }
    }
}

extension DatabaseReader {
    /// Hands the read to ``asyncRead(_:completion:)``: a reader with no cheaper way.
    public func readAfterCommit<T: Sendable>(
        estimatedDuration: Duration?,
        _ read: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        asyncRead(read, completion: completion)
    }
}

/// The writers that announce their commits: ``DatabaseQueue`` and ``DatabasePool``.
package protocol ChangeAnnouncingWriter: DatabaseWriter {
    var changeHub: DatabaseChangeHub { get }
}

extension DatabaseQueue: ChangeAnnouncingWriter {}
extension DatabasePool: ChangeAnnouncingWriter {}

extension DatabaseWriter {
    /// Where the writer announces its commits, for Strata's modules (observation, sync).
    ///
    /// Not a requirement of the public protocol, so that the hub stays `package`: the
    /// protocol's conformers are Strata's two writers, both ``ChangeAnnouncingWriter``s. A
    /// cast to a final class is a pointer comparison; it runs once per observation setup or
    /// fetch, never per row.
    package var changeHub: DatabaseChangeHub {
        if let queue = self as? DatabaseQueue { return queue.changeHub }
        if let pool = self as? DatabasePool { return pool.changeHub }
        if let writer = self as? any ChangeAnnouncingWriter { return writer.changeHub }
        preconditionFailure(
            "\(type(of: self)) conforms to DatabaseWriter outside Strata; only DatabaseQueue and DatabasePool are supported")
    }

    /// Calls `onChange` after every commit that changes a table of `region`, until the returned
    /// observation is cancelled or released.
    ///
    /// `onChange` runs on the writer's queue right after the commit: schedule work from it
    /// (for example a `read`), never block it. Only commits made through this queue or pool
    /// are seen; see ``notifyChanges(in:)`` for the others.
    public func observeChanges(in region: DatabaseRegion, onChange: @escaping @Sendable () -> Void) -> DatabaseChangeRegistration {
        changeHub.addObserver(region: region, onChange: onChange)
    }

    /// Tells observers that tables of `region` changed outside this queue or pool.
    ///
    /// SQLite's hooks only see the connection they are installed on: a change written by
    /// another process, or by another connection to the same file in this process, reaches no
    /// observer until you call this.
    public func notifyChanges(in region: DatabaseRegion) {
        if region.isFullDatabase {
            changeHub.notifyAll()
        } else {
            changeHub.notifyCommit(changedTables: region.tables)
        }
    }
}
