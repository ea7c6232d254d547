import Dispatch
import Foundation
import StrataSQLite
import StrataTestSupport
import Synchronization
import Testing

/// `readAfterCommit` reads inline on the writer's thread when a commit's budget allows it,
/// and hands the read to a reader's queue otherwise.
@Suite(.timeLimit(.minutes(5))) struct ReadAfterCommitTests {
    /// What one read saw, and whether it ran on the thread that committed.
    struct Observed: Sendable, Equatable {
        var count: Int?
        var ranOnCommittingThread: Bool
        var connection: String
    }

    func makePool(path: String, configure: (inout Configuration) -> Void = { _ in }) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "game"
        // A budget no read of these tests can exceed, however loaded the machine.
        configuration.inlineObservationBudget = .seconds(60)
        configure(&configuration)
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
        // Opens the first reader: inline reads only take a reader already open.
        _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        return pool
    }

    /// Commits one row from a background thread with an observer of `t` that reads with
    /// `estimate`, and returns what the read saw once it completed. Only that commit's
    /// announcement reads: `beforeReading` runs in it, on the committing thread, and
    /// `afterWrite` on that thread once `write` has returned.
    func commitAndObserve(
        _ pool: DatabasePool, estimate: Duration?,
        beforeReading: @escaping @Sendable () -> Void = {}, afterWrite: @escaping @Sendable () -> Void = {}
    ) async throws -> Observed {
        let observed = Mutex<Result<Observed, any Error>?>(nil)
        let completed = DispatchSemaphore(value: 0)
        let committingThread = Mutex<pthread_t?>(nil)
        let announcements = Mutex(0)
        let observation = pool.observeChanges(in: DatabaseRegion(tables: ["t"])) {
            let isFirst = announcements.withLock { count -> Bool in
                count += 1
                return count == 1
            }
            guard isFirst else { return }
            beforeReading()
            pool.readAfterCommit(estimatedDuration: estimate) { db in
                let current = pthread_self()
                let onCommittingThread = committingThread.withLock { $0.map { pthread_equal($0, current) != 0 } ?? false }
                return Observed(
                    count: try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t"),
                    ranOnCommittingThread: onCommittingThread, connection: db.description)
            } completion: { result in
                observed.withLock { $0 = result }
                completed.signal()
            }
        }
        defer { observation.cancel() }
        try await runOnBackgroundThread {
            committingThread.withLock { $0 = pthread_self() }
            try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            afterWrite()
        }
        #expect(await wait(for: completed))
        return try #require(observed.withLock { $0 }).get()
    }

    @Test func aReadWithinTheBudgetRunsOnTheCommittingThreadAndSeesTheCommit() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let observed = try await commitAndObserve(pool, estimate: .microseconds(10))
            #expect(observed == Observed(count: 2, ranOnCommittingThread: true, connection: "game.reader1"))
        }
    }

    @Test func aReadWithoutAnEstimateGoesToAReader() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let observed = try await commitAndObserve(pool, estimate: nil)
            #expect(observed == Observed(count: 2, ranOnCommittingThread: false, connection: "game.reader1"))
        }
    }

    @Test func aReadOverTheBudgetGoesToAReader() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let observed = try await commitAndObserve(pool, estimate: .seconds(61))
            #expect(observed.count == 2)
            #expect(!observed.ranOnCommittingThread)
        }
    }

    @Test func aZeroBudgetTurnsInlineReadsOff() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path) { $0.inlineObservationBudget = .zero }
            let observed = try await commitAndObserve(pool, estimate: .nanoseconds(1))
            #expect(observed.count == 2)
            #expect(!observed.ranOnCommittingThread)
        }
    }

    @Test func aBusyReaderIsNotWaitedForOnTheWritersThread() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path) { $0.maximumReaderCount = 1 }
            let held = try await HeldRead(on: pool)
            // The write returns although the only reader is busy (it is released only then):
            // the read waits for it on its own.
            let result = try await commitAndObserve(pool, estimate: .microseconds(10), afterWrite: held.release)
            #expect(try await held.read.value == 1)
            #expect(result.count == 2)
            #expect(!result.ranOnCommittingThread)
        }
    }

    @Test func aWriteWaitingForTheWriterSendsTheReadToAReader() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let writeWasQueued = Mutex(false)
            let observed = try await commitAndObserve(
                pool, estimate: .microseconds(10),
                beforeReading: {
                    // Another write queues behind the writer, which is busy announcing this commit.
                    Thread { _ = try? pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (3)") } }.start()
                    let deadline = ContinuousClock.now + realTimeBound
                    while !pool.hasWaitingWrites, ContinuousClock.now < deadline { sched_yield() }
                    writeWasQueued.withLock { $0 = pool.hasWaitingWrites }
                })
            #expect(writeWasQueued.withLock { $0 })
            #expect(observed.count.map { $0 >= 2 } == true)
            #expect(!observed.ranOnCommittingThread)
        }
    }

    @Test func outsideACommitAnnouncementTheReadGoesToAReader() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            // From a thread of its own that waits for the completion: a read handed off runs
            // on another thread.
            let ranOnCaller = try await runOnBackgroundThread {
                let caller = pthread_self()
                let ran = Mutex<Bool?>(nil)
                let completed = DispatchSemaphore(value: 0)
                pool.readAfterCommit(estimatedDuration: .nanoseconds(1)) { _ in
                    pthread_equal(pthread_self(), caller) != 0
                } completion: { result in
                    ran.withLock { $0 = try? result.get() }
                    completed.signal()
                }
                try waitOrThrow(completed)
                return ran.withLock { $0 }
            }
            #expect(ranOnCaller == false)
        }
    }
}
