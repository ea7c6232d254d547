import Dispatch
import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// Cancelling the task of an async access interrupts its statement, throws CancellationError,
/// rolls a write back, and leaves the queue or pool usable.
@Suite(.timeLimit(.minutes(5))) struct CancellationTests {
    /// A query that runs for minutes unless interrupted; `started()` signals when it runs.
    static let longQuery = """
        WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000)
        SELECT COUNT(*) FROM c
        """

    /// A configuration installing `started()`, which signals `semaphore` and returns 1.
    static func configuration(signalling semaphore: DispatchSemaphore, maximumReaderCount: Int = 5) -> Configuration {
        var configuration = Configuration()
        configuration.maximumReaderCount = maximumReaderCount
        configuration.prepareDatabase { db in
            try db.add(
                function: DatabaseFunction("started") { () -> Int in
                    semaphore.signal()
                    return 1
                })
        }
        return configuration
    }

    static func isCancellation<T>(_ result: Result<T, any Error>) -> Bool {
        if case .failure(let error) = result { return error is CancellationError }
        return false
    }

    func makePool(path: String, started: DispatchSemaphore, maximumReaderCount: Int = 5) throws -> DatabasePool {
        let pool = try DatabasePool(
            path: path, configuration: Self.configuration(signalling: started, maximumReaderCount: maximumReaderCount))
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
        return pool
    }

    @Test func cancellingAWriteInterruptsItsStatementAndRollsBack() async throws {
        try await withTemporaryDatabasePath { path in
            let started = DispatchSemaphore(value: 0)
            let pool = try makePool(path: path, started: started)
            let task = Task {
                try await pool.write { db in
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    return try Int.fetchOne(db, sql: Self.longQuery)
                }
            }
            #expect(await wait(for: started))
            task.cancel()
            let result = await task.result
            #expect(Self.isCancellation(result), "\(result)")
            // Rolled back, and the writer is out of its transaction.
            #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t") } == [1])
            #expect(try await pool.writeWithoutTransaction { db in db.isInsideTransaction } == false)
            // The pool keeps working.
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
            #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 3])
        }
    }

    @Test func cancellingAWriteBetweenStatementsRollsBack() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path, started: DispatchSemaphore(value: 0))
            let inserted = DispatchSemaphore(value: 0)
            let cancelled = DispatchSemaphore(value: 0)
            let task = Task {
                try await pool.write { db in
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    inserted.signal()
                    try waitOrThrow(cancelled)
                    // No statement was running when the task was cancelled: the next one throws.
                    try db.execute(sql: "INSERT INTO t VALUES (3)")
                }
            }
            #expect(await wait(for: inserted))
            task.cancel()
            cancelled.signal()
            #expect(Self.isCancellation(await task.result))
            #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t") } == [1])
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (4)") }
            #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 4])
        }
    }

    @Test func cancellingAReadInterruptsIt() async throws {
        try await withTemporaryDatabasePath { path in
            let started = DispatchSemaphore(value: 0)
            // One reader, so the interrupted connection is the one the next reads use.
            let pool = try makePool(path: path, started: started, maximumReaderCount: 1)
            let task = Task { try await pool.read { db in try Int.fetchOne(db, sql: Self.longQuery) } }
            #expect(await wait(for: started))
            task.cancel()
            #expect(Self.isCancellation(await task.result))
            // The reader is out of its snapshot: it sees later commits.
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 2)
            #expect(try await runOnBackgroundThread { try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } } == 2)
            #expect(pool.openReaderCount == 1)
        }
    }

    @Test func cancellingAQueueReadKeepsTheQueueWritable() async throws {
        let started = DispatchSemaphore(value: 0)
        let queue = try DatabaseQueue(configuration: Self.configuration(signalling: started))
        try await queue.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER)") }
        let task = Task { try await queue.read { db in try Int.fetchOne(db, sql: Self.longQuery) } }
        #expect(await wait(for: started))
        task.cancel()
        #expect(Self.isCancellation(await task.result))
        // The read's `PRAGMA query_only` was lifted despite the cancellation.
        try await queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
    }

    @Test func cancellingAQueueWriteRollsBack() async throws {
        let started = DispatchSemaphore(value: 0)
        let queue = try DatabaseQueue(configuration: Self.configuration(signalling: started))
        try await queue.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER)") }
        let task = Task {
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                _ = try Int.fetchOne(db, sql: Self.longQuery)
            }
        }
        #expect(await wait(for: started))
        task.cancel()
        #expect(Self.isCancellation(await task.result))
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 0)
        try await queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try await queue.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t") } == [2])
    }

    @Test func cancellingACursorLoopStopsIt() async throws {
        try await withTemporaryDatabasePath { path in
            let started = DispatchSemaphore(value: 0)
            let pool = try makePool(path: path, started: started, maximumReaderCount: 1)
            let task = Task {
                try await pool.read { db in
                    let cursor = try Int.fetchCursor(
                        db,
                        sql: "WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) SELECT x FROM c")
                    var count = 0
                    while try cursor.next() != nil { count += 1 }
                    return count
                }
            }
            #expect(await wait(for: started))
            task.cancel()
            #expect(Self.isCancellation(await task.result))
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
        }
    }

    @Test func cancellingAWriteWhileACursorIsOpenRollsBack() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3)") }
        let stepped = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        let task = Task {
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (4)")
                let cursor = try Int.fetchCursor(db, sql: "SELECT x FROM t ORDER BY x")
                _ = try cursor.next()
                stepped.signal()
                try waitOrThrow(cancelled)
                // The cursor is still open (its statement active) when the cancellation lands.
                try db.execute(sql: "INSERT INTO t VALUES (5)")
                _ = try cursor.next()
            }
        }
        #expect(await wait(for: stepped))
        task.cancel()
        cancelled.signal()
        #expect(Self.isCancellation(await task.result))
        #expect(try await queue.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 2, 3])
        try await queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (6)") }
        #expect(try await queue.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 2, 3, 6])
    }

    @Test func alreadyCancelledTaskDoesNotRunTheBody() async throws {
        let queue = try DatabaseQueue()
        let ran = SharedFlag()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await queue.write { _ in ran.value.store(true, ordering: .relaxed) }
        }
        #expect(Self.isCancellation(await task.result))
        #expect(ran.value.load(ordering: .relaxed) == false)
        try await queue.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
    }

    @Test func interruptStopsARunningStatement() async throws {
        try await withTemporaryDatabasePath { path in
            let started = DispatchSemaphore(value: 0)
            let pool = try makePool(path: path, started: started)
            let task = Task { try await pool.read { db in try Int.fetchOne(db, sql: Self.longQuery) } }
            #expect(await wait(for: started))
            pool.interrupt()
            let result = await task.result
            // Not a cancellation: SQLite's SQLITE_INTERRUPT error.
            if case .failure(let error as DatabaseError) = result {
                #expect(error.resultCode == .interrupt)
            } else {
                Issue.record("expected SQLITE_INTERRUPT, got \(result)")
            }
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
        }
    }
}
