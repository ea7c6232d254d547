import Dispatch
import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// A task executor whose jobs run on a thread of its own while it is open, and wait while it is
/// closed: it stands for a cooperative pool whose every thread is blocked.
final class GatedExecutor: TaskExecutor, @unchecked Sendable {
    private let lock = NSLock()
    private var isOpen = true
    private var waiting: [UnownedJob] = []
    private let queue = DispatchQueue(label: "gated-executor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        if isOpen {
            lock.unlock()
            run(job)
        } else {
            waiting.append(job)
            lock.unlock()
        }
    }

    private func run(_ job: UnownedJob) {
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }

    func close() {
        lock.withLock { isOpen = false }
    }

    func open() {
        let jobs = lock.withLock {
            isOpen = true
            defer { waiting.removeAll() }
            return waiting
        }
        for job in jobs { run(job) }
    }
}

/// An async write handed the writer while its task cannot run (every cooperative thread
/// blocked) still runs, so a synchronous write waiting behind it completes: the two-core
/// deadlock of the test suite (a synchronous access on a cooperative thread behind a task that
/// needed one to run), issue #25.
@Suite(.timeLimit(.minutes(1))) struct CooperativePoolTests {
    @Test func aSyncWriteBehindAnAsyncWriteCompletesWhenTheAsyncCallersExecutorIsStuck() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let pool = try DatabasePool(path: folder.databasePath)
        defer { pool.close() }
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (x)") }

        // Hold the writer from a thread of its own.
        let holding = DispatchSemaphore(value: 0)
        let releasing = DispatchSemaphore(value: 0)
        let held = Task {
            try await runOnBackgroundThread {
                try pool.write { db in
                    holding.signal()
                    try waitOrThrow(releasing)
                    try db.execute(sql: "INSERT INTO t VALUES ('held')")
                }
            }
        }
        #expect(await wait(for: holding))

        // An async write, from a task whose executor will be stuck, waits for the writer.
        let executor = GatedExecutor()
        let asyncWrite = Task(executorPreference: executor) {
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES ('async')") }
        }
        try await waitUntil { pool.hasWaitingWrites }
        executor.close()

        // The writer goes to the async write; a sync write waits behind it.
        releasing.signal()
        try await held.value
        let syncDone = DispatchSemaphore(value: 0)
        let syncWrite = Task {
            try await runOnBackgroundThread {
                try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES ('sync')") }
                syncDone.signal()
            }
        }
        let completed = await wait(for: syncDone, seconds: 40)
        executor.open()
        #expect(completed, "the sync write waited for an async write that needed its stuck executor to run")
        try await asyncWrite.value
        try await syncWrite.value
        let rows = try await pool.read { db in try String.fetchAll(db, sql: "SELECT x FROM t ORDER BY rowid") }
        #expect(rows == ["held", "async", "sync"])
    }
}
