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
///
/// The wait runs on a thread of its own rather than a dispatch worker: on Linux, libdispatch
/// adds workers only slowly when its few (one per core) are blocked, and the connections of
/// the queues and pools under test run on those workers.
func wait(for semaphore: DispatchSemaphore, seconds: Double = 10) async -> Bool {
    await withCheckedContinuation { continuation in
        let thread = Thread {
            continuation.resume(returning: semaphore.wait(timeout: .now() + seconds) == .success)
        }
        thread.start()
    }
}

/// Runs blocking code on a thread of its own (never a cooperative or dispatch worker) and
/// awaits its result.
func runOnBackgroundThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
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

/// Shared state for closures that run on other threads (an `Atomic` cannot be captured by an
/// escaping closure directly).
final class SharedCounter: Sendable {
    let value = Atomic<Int>(0)
}

final class SharedFlag: Sendable {
    let value = Atomic<Bool>(false)
}
