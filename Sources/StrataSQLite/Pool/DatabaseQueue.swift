import Foundation

/// A database accessed through a single connection: reads and writes take turns.
///
/// Use a queue for in-memory databases, tools and tests; use a ``DatabasePool`` when reads
/// should run while a write is in progress.
///
/// ```swift
/// let queue = try DatabaseQueue(path: "/tmp/app.sqlite")
/// try await queue.write { db in try db.execute("INSERT INTO games (title) VALUES (\(title))") }
/// let count = try await queue.read { db in try Game.fetchCount(db) }
/// ```
public final class DatabaseQueue: DatabaseWriter {
    /// The configuration the connections were opened with.
    public let configuration: Configuration
    /// Where the database lives.
    public let location: DatabaseLocation
    private let connection: SerialConnection
    private let owner: AccessOwner
    /// Where the writer announces its commits; observation registers here.
    package let changeHub = DatabaseChangeHub()

    /// Opens (creating if needed) a database file.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        try self.init(location: .file(path: path), configuration: configuration)
    }

    /// Opens an in-memory database. Without a name it is private to this queue; with a name it
    /// is shared with every queue and pool of the process that opens the same name.
    public convenience init(named name: String? = nil, configuration: Configuration = Configuration()) throws {
        try self.init(location: name.map { DatabaseLocation.namedMemory(name: $0) } ?? .privateMemory, configuration: configuration)
    }

    /// Opens a queue at `location`: a file (created if needed), a named or a private
    /// in-memory database.
    public init(location: DatabaseLocation, configuration: Configuration = Configuration()) throws {
        self.configuration = configuration
        self.location = location
        let label = configuration.label ?? "strata"
        owner = AccessOwner(description: "DatabaseQueue(\(location.description))")
        let database = try Database(
            location: location, configuration: configuration, readOnly: configuration.readOnly, role: .queue)
        for prepare in configuration.preparations {
            try prepare(database)
        }
        database.installChangeTracking(hub: changeHub)
        connection = SerialConnection(database: database, executor: DatabaseExecutor(label: "\(label).queue", owner: owner))
    }

    deinit {
        connection.close()
    }

    // MARK: Reading

    /// Reads from one snapshot, blocking the calling thread.
    /// Throws ``DatabaseAccessError`` (`.reentrantAccess`) when called from inside one of this
    /// database's own closures, where waiting would deadlock.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.read")
        return try connection.performSync(.read) { db in try db.readOnly(body) }
    }

    /// Reads from one snapshot. Cancelling the task ends the wait for a connection, or interrupts
    /// the running statement, with `CancellationError`.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform(.read) { db in try db.readOnly(body) }
    }

    // MARK: Writing

    /// Runs `body` in an `IMMEDIATE` transaction on the writer, blocking the calling thread:
    /// committed if it returns, rolled back if it throws.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.write")
        return try connection.performSync(.write) { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` in an `IMMEDIATE` transaction on the writer: committed if it returns, rolled
    /// back if it throws or the task is cancelled.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform(.write) { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` on the writer outside any transaction, blocking the calling thread: for
    /// statements that cannot run in one, or to manage transactions yourself.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.writeWithoutTransaction")
        return try connection.performSync(.writeWithoutTransaction, body)
    }

    /// Runs `body` on the writer outside any transaction.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform(.writeWithoutTransaction, body)
    }

    /// With a single connection no read can run during a write, so this is
    /// `writeWithoutTransaction(_:)`.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func barrierWriteWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.barrierWriteWithoutTransaction")
        return try connection.performSync(.barrierWriteWithoutTransaction, body)
    }

    /// Waits until no read runs, keeps new reads out, and runs `body` on the writer outside any
    /// transaction. Cancelling the task while it waits ends the wait with `CancellationError`.
    ///
    /// `body`'s `Database` is lent to it: used after `body` returns, or from another thread,
    /// it stops the process (see ``Database``).
    public func barrierWriteWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform(.barrierWriteWithoutTransaction, body)
    }

    /// Reads from one snapshot on the queue's connection, later; returns at once. See
    /// ``DatabaseReader/asyncRead(_:completion:)``.
    public func asyncRead<T: Sendable>(
        _ read: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        connection.performAsync(.asyncRead) { connection in
            completion(connection.flatMap { db in Result { try db.readOnly(read) } })
        }
    }

    // MARK: Lifecycle

    /// Interrupts the statements running now (`sqlite3_interrupt`); they fail with
    /// `SQLITE_INTERRUPT`. Accesses that have not started are not affected.
    public func interrupt() {
        connection.interruptState.interruptAll()
    }

    /// Closes the connection once the access running now (if any) has ended; later accesses
    /// throw ``DatabaseAccessError``. Called from inside one of the queue's own closures, it
    /// returns at once and the connection closes when that closure returns.
    public func close() {
        connection.close()
    }
}

extension Database {
    /// A read on a connection that can also write: one snapshot, and `PRAGMA query_only` so a
    /// write attempted by mistake fails instead of being committed.
    func readOnly<T>(_ body: (Database) throws -> T) throws -> T {
        if isInsideTransaction || isReadOnly {
            return try readInSnapshotIfNeeded(body)
        }
        try execute(sql: "PRAGMA query_only = 1")
        defer { try? executeIgnoringCancellation(sql: "PRAGMA query_only = 0") }
        return try readInSnapshot(body)
    }

    private func readInSnapshotIfNeeded<T>(_ body: (Database) throws -> T) throws -> T {
        isInsideTransaction ? try body(self) : try readInSnapshot(body)
    }
}
