import Dispatch
import StrataSQLite
import StrataTestSupport

/// An in-memory queue with a `players` table used by many tests.
func makePlayersQueue(configuration: Configuration = Configuration()) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(configuration: configuration)
    try queue.write { db throws in
        try db.execute(
            sql: """
                CREATE TABLE players (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    name TEXT NOT NULL UNIQUE,
                    score INTEGER NOT NULL DEFAULT 0
                )
                """)
    }
    return queue
}

/// A `read` holding one of a pool's readers (with `maximumReaderCount = 1`, the only one)
/// until ``release()``; made once the read holds it.
struct HeldRead {
    private let releasing = DispatchSemaphore(value: 0)
    /// The held read's `SELECT COUNT(*) FROM t`.
    let read: Task<Int?, any Error>

    init(on pool: DatabasePool) async throws {
        let holding = DispatchSemaphore(value: 0)
        let releasing = self.releasing
        read = Task {
            try await pool.read { db in
                holding.signal()
                try waitOrThrow(releasing)
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
            }
        }
        guard await wait(for: holding) else { throw TimeoutError() }
    }

    func release() { releasing.signal() }
}
