import StrataSQLite

extension SyncEngine {
    /// Reads the metadatabase (attached to the writer only) in a `DEFERRED` transaction: a
    /// read-only access locks only the files it reads, where `write`'s `IMMEDIATE` transaction
    /// takes the write lock of the user's file and of every attached file, and releases them
    /// again, for nothing. A push makes a dozen such reads; with `IMMEDIATE` each cost about
    /// thirty `fcntl` calls.
    func readOnWriter<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await database.writeWithoutTransaction { db in try db.transaction(.deferred) { try body(db) } }
    }
}
