import Dispatch
import Foundation
import StrataSQLite
import Synchronization
import Testing

/// A unique path under the temporary directory, removed (with its -wal, -shm and -journal
/// companions) when `body` returns.
func withTemporaryDatabasePath<T>(_ body: (String) throws -> T) throws -> T {
    let path = temporaryDatabasePath()
    defer { removeDatabaseFiles(at: path) }
    return try body(path)
}

/// The async variant of ``withTemporaryDatabasePath(_:)``.
func withTemporaryDatabasePath<T>(_ body: (String) async throws -> T) async throws -> T {
    let path = temporaryDatabasePath()
    defer { removeDatabaseFiles(at: path) }
    return try await body(path)
}

func temporaryDatabasePath() -> String {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("strata-tests-\(UUID().uuidString).sqlite").path
}

func removeDatabaseFiles(at path: String) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: path + suffix)
    }
}

/// A unique name for an in-memory pool or queue, so tests running in parallel never share data.
func uniqueMemoryName() -> String {
    "strata-tests-\(UUID().uuidString)"
}

/// Waits for a semaphore without blocking a cooperative thread. Returns false on timeout.
func wait(for semaphore: DispatchSemaphore, seconds: Double = 10) async -> Bool {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
        }
    }
}

/// Runs blocking code on a dispatch thread (never a cooperative one) and awaits its result.
func runOnBackgroundThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}

struct TimeoutError: Error, CustomStringConvertible {
    var description: String { "timed out waiting for a semaphore" }
}

/// Throws when the semaphore is not signalled in time, so a closure that waits fails the test
/// instead of hanging it.
func waitOrThrow(_ semaphore: DispatchSemaphore, seconds: Double = 10) throws {
    if semaphore.wait(timeout: .now() + seconds) != .success { throw TimeoutError() }
}

/// A thread-safe list, for closures that record what happened (traces, migration logs).
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Mutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var elements: [Element] { storage.withLock { $0 } }
}

/// An in-memory queue with a `players` table used by many tests.
func makePlayersQueue(configuration: Configuration = Configuration()) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(configuration: configuration)
    try queue.write { db throws in
        try db.execute(sql: """
            CREATE TABLE players (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE,
                score INTEGER NOT NULL DEFAULT 0
            )
            """)
    }
    return queue
}
