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
    public let configuration: Configuration
    /// The file path or a description of the in-memory database.
    public let path: String
    private let connection: SerialConnection
    private let owner: AccessOwner
    /// Where the writer announces its commits; observation registers here.
    public let changeHub = DatabaseChangeHub()

    /// Opens (creating if needed) a database file.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        try self.init(location: .file(path), configuration: configuration)
    }

    /// Opens an in-memory database. Without a name it is private to this queue; with a name it
    /// is shared with every queue and pool of the process that opens the same name.
    public convenience init(named name: String? = nil, configuration: Configuration = Configuration()) throws {
        try self.init(location: name.map(DatabaseLocation.sharedMemory) ?? .privateMemory, configuration: configuration)
    }

    init(location: DatabaseLocation, configuration: Configuration) throws {
        self.configuration = configuration
        self.path = location.description
        let label = configuration.label ?? "strata"
        owner = AccessOwner(description: "DatabaseQueue(\(location.description))")
        let database = try Database(
            path: location.openPath, configuration: configuration, readOnly: configuration.readOnly, role: "queue")
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

    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.read")
        return try connection.performSync { db in try db.readOnly(body) }
    }

    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform { db in try db.readOnly(body) }
    }

    // MARK: Writing

    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.write")
        return try connection.performSync { db in try db.transaction(.immediate) { try body(db) } }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform { db in try db.transaction(.immediate) { try body(db) } }
    }

    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.writeWithoutTransaction")
        return try connection.performSync(body)
    }

    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform(body)
    }

    /// With a single connection no read can run during a write, so this is
    /// ``writeWithoutTransaction(_:)-(Database)->T``.
    public func barrierWriteWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try owner.checkNotReentrant("DatabaseQueue.barrierWriteWithoutTransaction")
        return try connection.performSync(body)
    }

    public func barrierWriteWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await connection.perform(body)
    }

    // MARK: Lifecycle

    public func interrupt() {
        connection.interruptState.interruptAll()
    }

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
