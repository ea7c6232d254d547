/// What a connection is for in its ``DatabaseQueue`` or ``DatabasePool``.
///
/// ``Configuration/prepareDatabase(_:)`` runs on every connection; read ``Database/role`` there
/// to do work that only fits some of them:
///
/// ```swift
/// configuration.prepareDatabase { db in
///     try db.add(function: slugify)                    // every connection
///     if db.role.canWrite {
///         try db.execute(sql: "CREATE TEMP TRIGGER …") // triggers that write: writers only
///     }
/// }
/// ```
public enum ConnectionRole: String, Sendable, Hashable {
    /// The single connection of a ``DatabaseQueue``: reads and writes.
    case queue
    /// The writer of a ``DatabasePool``.
    case writer
    /// A read-only reader of a ``DatabasePool``.
    case reader
    /// The private in-memory connection ``DatabaseMigrator`` migrates from scratch to compare
    /// schemas when ``DatabaseMigrator/eraseDatabaseOnSchemaChange`` is on. It is thrown away
    /// afterwards; ``Database/attach(path:as:)`` attaches a fresh in-memory database there
    /// instead of the file, so preparations never touch real files from it.
    case migrationReference = "migration-reference"

    /// Whether the connection writes: the queue, the pool's writer and the migration reference.
    public var canWrite: Bool { self != .reader }
}
