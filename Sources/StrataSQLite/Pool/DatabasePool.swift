import Foundation
import Synchronization

/// A database with one writer connection and a pool of reader connections.
///
/// - Writes are serialized on the writer and begin `IMMEDIATE` transactions.
/// - Reads run on up to ``Configuration/maximumReaderCount`` read-only connections at once,
///   in parallel with each other and with the writer. Each `read` sees one snapshot: a commit
///   made while the closure runs is not visible to it.
/// - A file pool uses SQLite's WAL journal, which is what lets readers and the writer run at the
///   same time. An in-memory pool (``init(named:configuration:)``) shares one memdb database
///   among its connections; memdb has no WAL, so there a commit waits for running reads to
///   finish (up to the busy timeout) instead of running beside them.
public final class DatabasePool: DatabaseWriter {
    /// The configuration the connections were opened with.
    public let configuration: Configuration
    /// Where the database lives.
    public let location: DatabaseLocation
    private let owner: AccessOwner
    /// Where the writer announces its commits; observation registers here.
    package let changeHub: DatabaseChangeHub
    private let writer: SerialConnection
    private let permits: AccessPermits
    private let idleReaders = Mutex<[SerialConnection]>([])
    private let allReaders = Mutex<[SerialConnection]>([])
    private let isClosed = Atomic<Bool>(false)
    private let readerCounter = Atomic<Int>(0)

    /// Opens (creating if needed) a database file in WAL mode.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        try self.init(location: .file(path: path), configuration: configuration)
    }

    /// Opens an in-memory pool shared by every pool and queue of the process that uses the
    /// same name. Give each test its own name to isolate tests from one another.
    public convenience init(named name: String, configuration: Configuration = Configuration()) throws {
        try self.init(location: .namedMemory(name: name), configuration: configuration)
    }

    /// Opens a pool at `location`: a file (created if needed, in WAL mode) or a named
    /// in-memory database.
    ///
    /// - Throws: ``DatabaseAccessError`` for ``DatabaseLocation/privateMemory``, which only one
    ///   connection can see: use a ``DatabaseQueue`` there.
    public init(location: DatabaseLocation, configuration: Configuration = Configuration()) throws {
        if location == .privateMemory {
            throw DatabaseAccessError(
                .invalidLocation,
                "a DatabasePool needs a database its connections share: a file or a named in-memory database, not a private one")
        }
        self.location = location
        self.configuration = configuration
        changeHub = DatabaseChangeHub(inlineReadBudget: configuration.inlineObservationBudget)
        owner = AccessOwner(description: "DatabasePool(\(location.description))")
        permits = AccessPermits(capacity: configuration.maximumReaderCount)
        let database = try Database(
            location: location, configuration: configuration, readOnly: configuration.readOnly, role: .writer)
        if location.isFile && !configuration.readOnly {
            try database.enableWAL(schema: "main", describing: location.description, requirement: "; a pool needs WAL")
        }
        for prepare in configuration.preparations {
            try prepare(database)
        }
        database.installChangeTracking(hub: changeHub)
        let label = configuration.label ?? "strata"
        writer = SerialConnection(database: database, executor: DatabaseExecutor(label: "\(label).writer", owner: owner))
    }

    deinit {
        close()
    }

    // MARK: Reading

    /// Reads from one snapshot, blocking the calling thread.
    /// Throws ``DatabaseAccessError`` (`.reentrantAccess`) when called from inside one of this
    /// database's own closures, where waiting would deadlock.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabasePool.read")
        try checkOpen()
        permits.acquireSync()
        defer { permits.release() }
        let reader = try takeReader()
        defer { returnReader(reader) }
        return try reader.performSync(.read) { db in try db.readInSnapshot(body) }
    }

    /// Reads from one snapshot. Cancelling the task ends the wait for a connection, or interrupts
    /// the running statement, with `CancellationError`.
    ///
    /// A read that waits for a reader waits off Swift's cooperative pool, and the reader goes
    /// back on its own queue when the read ends: a synchronous read blocked behind it never
    /// waits for a cooperative thread (see `SerialConnection.perform`).
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkOpen()
        if permits.tryAcquire() { return try await readHoldingPermit(body) }
        return try await withTaskExecutorPreference(PermitWaitExecutor.shared) {
            try await permits.acquire()
            return try await readHoldingPermit(body)
        }
    }

    private func readHoldingPermit<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let reader: SerialConnection
        do {
            reader = try takeReader()
        } catch {
            permits.release()
            throw error
        }
        let giveBack = OnceAction { [self] in
            returnReader(reader)
            permits.release()
        }
        do {
            return try await reader.perform(.read, afterJob: giveBack.run) { db in try db.readInSnapshot(body) }
        } catch {
            giveBack.run()
            throw error
        }
    }

    /// Reads from one snapshot on a reader's queue, later; returns at once. See
    /// ``DatabaseReader/asyncRead(_:completion:)``.
    public func asyncRead<T: Sendable>(
        _ read: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        do {
            try checkOpen()
        } catch {
            completion(.failure(error))
            return
        }
        permits.acquire { [self] in
            let reader: SerialConnection
            do {
                reader = try takeReader()
            } catch {
                permits.release()
                completion(.failure(error))
                return
            }
            reader.performAsync(.asyncRead) { [self] connection in
                let result = connection.flatMap { db in Result { try db.readInSnapshot(read) } }
                // The reader goes back before `completion`, so that a read `completion` starts
                // (an observer's follow-up fetch) can take it: it runs right after this job.
                returnReader(reader)
                permits.release()
                completion(result)
            }
        }
    }

    /// Reads inline on the calling thread when the commit being announced leaves time for it
    /// and a reader is idle, else as ``asyncRead(_:completion:)``. See
    /// ``DatabaseReader/readAfterCommit(estimatedDuration:_:completion:)``.
    public func readAfterCommit<T: Sendable>(
        estimatedDuration: Duration?,
        _ read: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        // Not while a write waits for the writer: a burst of writes goes faster with reads
        // handed off, where the commits made during one fetch collapse into one follow-up.
        if let estimatedDuration, estimatedDuration <= changeHub.inlineReadTimeRemaining,
            !isClosed.load(ordering: .acquiring), !hasWaitingWrites, permits.tryAcquire()
        {
            // Only a reader already open: opening one costs more than the hand-off it saves.
            if let reader = idleReaders.withLock({ $0.popLast() }) {
                let result = reader.performIfFree(.readAfterCommit) { connection in
                    connection.flatMap { db in Result { try db.readInSnapshot(read) } }
                }
                returnReader(reader)
                permits.release()
                if let result {
                    completion(result)
                    return
                }
            } else {
                permits.release()
            }
        }
        asyncRead(read, completion: completion)
    }

    /// Whether a write waits for the writer now (for tests and `readAfterCommit`).
    package var hasWaitingWrites: Bool { writer.admission.hasWaiters }

    // MARK: Writing

    /// Runs `body` in an `IMMEDIATE` transaction on the writer, blocking the calling thread:
    /// committed if it returns, rolled back if it throws.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabasePool.write")
        try checkOpen()
        return try writer.performSync(.write) { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` in an `IMMEDIATE` transaction on the writer: committed if it returns, rolled
    /// back if it throws or the task is cancelled.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkOpen()
        return try await writer.perform(.write) { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` on the writer outside any transaction, blocking the calling thread: for
    /// statements that cannot run in one, or to manage transactions yourself.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabasePool.writeWithoutTransaction")
        try checkOpen()
        return try writer.performSync(.writeWithoutTransaction, body)
    }

    /// Runs `body` on the writer outside any transaction.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkOpen()
        return try await writer.perform(.writeWithoutTransaction, body)
    }

    /// Waits until no read runs, keeps new reads out, and runs `body` on the writer outside any
    /// transaction, blocking the calling thread.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func barrierWriteWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabasePool.barrierWriteWithoutTransaction")
        try checkOpen()
        permits.acquireSync(all: true)
        defer { permits.release(all: true) }
        return try writer.performSync(.barrierWriteWithoutTransaction, body)
    }

    /// Waits until no read runs, keeps new reads out, and runs `body` on the writer outside any
    /// transaction. Cancelling the task while it waits ends the wait with `CancellationError`.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func barrierWriteWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try checkOpen()
        // Waits, and gives the permits back, off the cooperative pool (see `read`).
        return try await withTaskExecutorPreference(PermitWaitExecutor.shared) {
            try await permits.acquire(all: true)
            let giveBack = OnceAction { [self] in permits.release(all: true) }
            do {
                return try await writer.perform(.barrierWriteWithoutTransaction, afterJob: giveBack.run, body)
            } catch {
                giveBack.run()
                throw error
            }
        }
    }

    // MARK: Lifecycle

    /// The number of reader connections opened so far (they open on demand).
    public var openReaderCount: Int {
        allReaders.withLock { $0.count }
    }

    /// Interrupts the statements running now (`sqlite3_interrupt`); they fail with
    /// `SQLITE_INTERRUPT`. Accesses that have not started are not affected.
    public func interrupt() {
        writer.interruptState.interruptAll()
        for reader in allReaders.withLock({ $0 }) {
            reader.interruptState.interruptAll()
        }
    }

    /// Closes the pool: idle readers now, the writer once the write running now (if any) has
    /// ended, and readers still running a `read` when it returns. New accesses throw
    /// ``DatabaseAccessError``.
    ///
    /// It never waits for running reads: `close()` is often called from `deinit` or a test's
    /// teardown on a cooperative thread, and waiting there for async reads, which need a
    /// cooperative thread to finish, could deadlock the whole pool of them. Called from inside
    /// one of the pool's own closures, it returns at once and that connection closes when the
    /// closure returns.
    public func close() {
        let idle = idleReaders.withLock { idle -> [SerialConnection]? in
            guard !isClosed.exchange(true, ordering: .acquiringAndReleasing) else { return nil }
            defer { idle.removeAll() }
            return idle
        }
        guard let idle else { return }
        for reader in idle {
            reader.close()
        }
        writer.close()
    }

    // MARK: Readers

    private func checkOpen() throws {
        if isClosed.load(ordering: .acquiring) {
            throw DatabaseAccessError(.closed, "\(owner.description) is closed")
        }
    }

    /// An idle reader, or a new one. The caller holds a permit, so at most
    /// `maximumReaderCount` readers ever exist.
    private func takeReader() throws -> SerialConnection {
        if let reader = idleReaders.withLock({ $0.popLast() }) {
            return reader
        }
        let number = readerCounter.add(1, ordering: .relaxed).newValue
        let database = try Database(
            location: location, configuration: configuration, readOnly: true, role: .reader, number: number)
        for prepare in configuration.preparations {
            try prepare(database)
        }
        let label = configuration.label ?? "strata"
        let reader = SerialConnection(database: database, executor: DatabaseExecutor(label: "\(label).reader\(number)", owner: owner))
        allReaders.withLock { $0.append(reader) }
        return reader
    }

    private func returnReader(_ reader: SerialConnection) {
        let isClosed = idleReaders.withLock { idle -> Bool in
            if self.isClosed.load(ordering: .acquiring) { return true }
            idle.append(reader)
            return false
        }
        if isClosed { reader.close() }
    }
}
