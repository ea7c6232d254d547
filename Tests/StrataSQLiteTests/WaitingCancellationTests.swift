import Dispatch
import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// A cancelled access that is still waiting for its connection ends promptly with
/// `CancellationError`, holding nothing (regression: it used to wait for the access ahead of
/// it, minutes for a long query).
@Suite(.timeLimit(.minutes(5))) struct WaitingCancellationTests {
    /// Awaits `task`, failing instead of hanging when it does not end within `seconds`.
    func result<T: Sendable>(of task: Task<T, any Error>, within seconds: Double = 45) async -> Result<T, any Error>? {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<T>()
        Task {
            box.set(await task.result)
            done.signal()
        }
        guard await wait(for: done, seconds: seconds) else { return nil }
        return box.get()
    }

    @Test func aReadWaitingForAReaderEndsWhenCancelled() async throws {
        try await withTemporaryDatabasePath { path in
            let started = DispatchSemaphore(value: 0)
            let pool = try DatabasePool(
                path: path, configuration: CancellationTests.configuration(signalling: started, maximumReaderCount: 1))
            try await pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
            let long = Task { try await pool.read { db in try Int.fetchOne(db, sql: CancellationTests.longQuery) } }
            #expect(await wait(for: started))
            let waiting = Task { try await pool.read { db in try Int.fetchOne(db, sql: "SELECT x FROM t") } }
            await Task.yield()
            waiting.cancel()
            let outcome = await result(of: waiting)
            #expect(outcome != nil, "the cancelled read did not end while the long read ran")
            if let outcome { #expect(CancellationTests.isCancellation(outcome), "\(outcome)") }
            long.cancel()
            _ = await long.result
            // Nothing is held: the single reader permit is free again.
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT x FROM t") } == 1)
        }
    }

    @Test func aWriteQueuedBehindTheWriterEndsWhenCancelled() async throws {
        try await withTemporaryDatabasePath { path in
            let started = DispatchSemaphore(value: 0)
            let pool = try DatabasePool(path: path, configuration: CancellationTests.configuration(signalling: started))
            try await pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
            let long = Task { try await pool.write { db in try Int.fetchOne(db, sql: CancellationTests.longQuery) } }
            #expect(await wait(for: started))
            let waiting = Task { try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") } }
            await Task.yield()
            waiting.cancel()
            let outcome = await result(of: waiting)
            #expect(outcome != nil, "the cancelled write did not end while the long write ran")
            if let outcome { #expect(CancellationTests.isCancellation(outcome), "\(outcome)") }
            long.cancel()
            _ = await long.result
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
            #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 3])
        }
    }

    @Test func anAccessQueuedOnADatabaseQueueEndsWhenCancelled() async throws {
        let started = DispatchSemaphore(value: 0)
        let queue = try DatabaseQueue(configuration: CancellationTests.configuration(signalling: started))
        let long = Task { try await queue.read { db in try Int.fetchOne(db, sql: CancellationTests.longQuery) } }
        #expect(await wait(for: started))
        let waiting = Task { try await queue.read { db in try Int.fetchOne(db, sql: "SELECT 1") } }
        await Task.yield()
        waiting.cancel()
        let outcome = await result(of: waiting)
        #expect(outcome != nil, "the cancelled access did not end while the long one ran")
        if let outcome { #expect(CancellationTests.isCancellation(outcome), "\(outcome)") }
        long.cancel()
        _ = await long.result
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT 2") } == 2)
    }

    @Test func aBarrierWaitingForReadsEndsWhenCancelledAndLetsLaterReadsIn() async throws {
        try await withTemporaryDatabasePath { path in
            let started = DispatchSemaphore(value: 0)
            let pool = try DatabasePool(
                path: path, configuration: CancellationTests.configuration(signalling: started, maximumReaderCount: 2))
            try await pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
            let long = Task { try await pool.read { db in try Int.fetchOne(db, sql: CancellationTests.longQuery) } }
            #expect(await wait(for: started))
            let barrier = Task { try await pool.barrierWriteWithoutTransaction { _ in 1 } }
            await Task.yield()
            barrier.cancel()
            let outcome = await result(of: barrier)
            #expect(outcome != nil, "the cancelled barrier did not end while the long read ran")
            // A read behind the departed barrier gets the second reader at once.
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT x FROM t") } == 1)
            long.cancel()
            _ = await long.result
        }
    }
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    // Unchecked: written once by one task before the semaphore is signalled, read after.
    private var value: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { self.value = value }
    func get() -> Result<T, any Error>? { value }
}
