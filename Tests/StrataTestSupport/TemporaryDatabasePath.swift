import Foundation

/// A unique path under the temporary directory, removed (with its -wal, -shm and -journal
/// companions) when `body` returns.
package func withTemporaryDatabasePath<T>(_ body: (String) throws -> T) throws -> T {
    let path = temporaryDatabasePath()
    defer { removeDatabaseFiles(at: path) }
    return try body(path)
}

/// The async variant of ``withTemporaryDatabasePath(_:)``.
package func withTemporaryDatabasePath<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = temporaryDatabasePath()
    defer { removeDatabaseFiles(at: path) }
    return try await body(path)
}

/// A unique database path under the temporary directory; the caller removes it with
/// ``removeDatabaseFiles(at:)``.
package func temporaryDatabasePath() -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("strata-tests-\(UUID().uuidString).sqlite").path
}

/// Removes a database file and its -wal, -shm and -journal companions.
package func removeDatabaseFiles(at path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
    }
}

/// A unique name for an in-memory pool or queue, so tests running in parallel never share data.
package func uniqueMemoryName() -> String {
    "strata-tests-\(UUID().uuidString)"
}
