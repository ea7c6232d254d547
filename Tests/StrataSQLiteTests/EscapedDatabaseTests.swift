import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// Holds what a test lets escape from an access, past the `Sendable` checks that keep the
/// async accesses from returning a `Database`: the misuse the confinement check catches at run
/// time.
final class EscapeBox: @unchecked Sendable {
    var db: Database?
    var statement: Statement?
}

/// Uses `db` from a thread of its own and waits for it: a `Database` captured by a closure that
/// runs elsewhere while its access is still open.
func useFromAnotherThread(_ db: Database) {
    let box = EscapeBox()
    box.db = db
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        _ = try? box.db?.execute(sql: "SELECT 1")
        done.signal()
    }
    thread.start()
    _ = done.wait(timeout: .now() + 45)
}

/// Runs `body` on a thread of its own and waits for it without blocking a thread: an exit
/// test's child uses the synchronous accesses (and `useFromAnotherThread(_:)` waits for its
/// thread), which must not block the cooperative pool.
func onOwnThread(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread {
            do {
                try body()
                continuation.resume()
            } catch {
                continuation.resume(throwing: error)
            }
        }.start()
    }
}

/// Runs each job on a thread of its own: what `exitTest(_:)` runs Swift Testing's exit-test
/// machinery on.
final class ThreadPerJobExecutor: TaskExecutor {
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread { job.runSynchronously(on: executor) }.start()
    }
}

/// Runs `body`, an `#expect(processExitsWith:)`, with its tasks on threads of their own.
///
/// While the child process runs, the parent's side of an exit test blocks a thread in each of
/// the tasks that read the child's pipes (its standard error, its event back channel). On the
/// cooperative pool that is both threads of a two-core machine: every other test of the process
/// stalls until the child exits: seconds when sixteen children start on a loaded machine, long
/// enough to time out the bounded waits of other suites. Those tasks inherit this executor
/// preference, and block threads of their own instead.
func exitTest(_ body: () async -> ExitTest.Result?) async -> ExitTest.Result? {
    await withTaskExecutorPreference(ThreadPerJobExecutor()) { await body() }
}

/// A `Database` used outside of the access that lent it — after its closure returned, or from
/// another thread while it runs — stops the process with a message naming the misuse. Each
/// misuse runs in a child process (an exit test), whose standard error is checked.
///
@Suite(.timeLimit(.minutes(5))) struct EscapedDatabaseTests {
    /// Checks that the child stopped with the confinement message, and that it names each of
    /// `fragments`.
    func expectMisuse(_ result: ExitTest.Result?, naming fragments: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        let output = result.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        #expect(output.contains("was used outside of its access"), "\(output)", sourceLocation: sourceLocation)
        for fragment in fragments {
            #expect(output.contains(fragment), "missing \"\(fragment)\" in: \(output)", sourceLocation: sourceLocation)
        }
    }

    // MARK: DatabaseQueue

    @Test func queueRead() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    let db = try queue.read { $0 }
                    try db.execute(sql: "SELECT 1")
                }
            }
        }
        expectMisuse(result, naming: ["database.queue", "Database.execute(sql:arguments:)", "`SELECT 1`", "escaped from the `read`"])
    }

    @Test func queueWrite() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    let db = try queue.write { $0 }
                    _ = try Int.fetchOne(db, sql: "SELECT 1")
                }
            }
        }
        expectMisuse(result, naming: ["Database.cachedStatement(sql:)", "escaped from the `write`"])
    }

    /// A member that cannot throw is checked too.
    @Test func queueWriteWithoutTransaction() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    let db = try queue.writeWithoutTransaction { $0 }
                    _ = db.lastInsertedRowID
                }
            }
        }
        expectMisuse(result, naming: ["Database.lastInsertedRowID", "escaped from the `writeWithoutTransaction`"])
    }

    @Test func queueBarrierWriteWithoutTransaction() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    let db = try queue.barrierWriteWithoutTransaction { $0 }
                    _ = try db.makeStatement(sql: "SELECT 1")
                }
            }
        }
        expectMisuse(result, naming: ["Database.makeStatement(sql:)", "escaped from the `barrierWriteWithoutTransaction`"])
    }

    /// The async accesses cannot return a `Database` (it is not `Sendable`), but a closure can
    /// still smuggle it out.
    @Test func queueAsyncWrite() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let queue = try DatabaseQueue()
                let box = EscapeBox()
                try await queue.write { db in box.db = db }
                try box.db?.inTransaction { .commit }
            }
        }
        expectMisuse(result, naming: ["Database.execute(sql:arguments:)", "BEGIN", "escaped from the `write`"])
    }

    /// The queue's single connection is busy with another access, on another thread, when the
    /// escaped `Database` is used: a flag saying "inside an access" would let this through.
    @Test func queueUsedWhileAnotherAccessRuns() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    let db = try queue.read { $0 }
                    try queue.write { _ in useFromAnotherThread(db) }
                }
            }
        }
        expectMisuse(result, naming: ["it is lent to the `write` closure running on another thread"])
    }

    /// Captured inside the closure and used from a thread it starts, while the access runs.
    @Test func usedFromAnotherThreadInsideTheAccess() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    try queue.read { db in useFromAnotherThread(db) }
                }
            }
        }
        expectMisuse(result, naming: ["it is lent to the `read` closure running on another thread"])
    }

    // MARK: DatabasePool

    @Test func poolRead() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let pool = try DatabasePool(named: "escaped-\(UUID())")
                    let db = try pool.read { $0 }
                    try db.execute(sql: "SELECT 1")
                }
            }
        }
        expectMisuse(result, naming: ["database.reader1", "escaped from the `read`"])
    }

    @Test func poolAsyncRead() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let pool = try DatabasePool(named: "escaped-\(UUID())")
                let box = EscapeBox()
                try await pool.read { db in box.db = db }
                _ = try box.db.map { try Int.fetchAll($0, sql: "SELECT 1") }
            }
        }
        expectMisuse(result, naming: ["database.reader1", "escaped from the `read`"])
    }

    @Test func poolWrite() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let pool = try DatabasePool(named: "escaped-\(UUID())")
                    let db = try pool.write { $0 }
                    try db.execute(sql: "CREATE TABLE t (x)")
                }
            }
        }
        expectMisuse(result, naming: ["database.writer", "escaped from the `write`"])
    }

    @Test func poolWriteWithoutTransaction() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let pool = try DatabasePool(named: "escaped-\(UUID())")
                let box = EscapeBox()
                try await pool.writeWithoutTransaction { db in box.db = db }
                _ = box.db?.isInsideTransaction
            }
        }
        expectMisuse(result, naming: ["Database.isInsideTransaction", "escaped from the `writeWithoutTransaction`"])
    }

    @Test func poolBarrierWriteWithoutTransaction() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let pool = try DatabasePool(named: "escaped-\(UUID())")
                    let db = try pool.barrierWriteWithoutTransaction { $0 }
                    try db.add(function: DatabaseFunction("f", argumentCount: 0) { _ in 1 })
                }
            }
        }
        expectMisuse(result, naming: ["Database.add(function:)", "escaped from the `barrierWriteWithoutTransaction`"])
    }

    @Test func poolAsyncReadWithoutTask() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                let pool = try DatabasePool(named: "escaped-\(UUID())")
                let box = EscapeBox()
                await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
                    pool.asyncRead({ db in box.db = db }, completion: { _ in finished.resume() })
                }
                try box.db?.execute(sql: "SELECT 1")
            }
        }
        // `completion` runs at the end of the job, so the job may not have ended yet: the
        // message then says the connection is lent to the `asyncRead` rather than escaped.
        expectMisuse(result, naming: ["`asyncRead`"])
    }

    /// A preparation runs before the queue or pool takes the connection; keeping its
    /// `Database` is the same misuse.
    @Test func prepareDatabase() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let box = EscapeBox()
                    var configuration = Configuration()
                    configuration.label = "prepared"
                    configuration.prepareDatabase { db in box.db = db }
                    let queue = try DatabaseQueue(configuration: configuration)
                    try box.db?.execute(sql: "SELECT 1")
                    _ = queue
                }
            }
        }
        expectMisuse(result, naming: ["prepared.queue", "escaped from the `Configuration.prepareDatabase`"])
    }

    // MARK: Statements and cursors

    @Test func statement() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    let statement = try queue.read { db in try db.makeStatement(sql: "SELECT 42") }
                    try statement.execute()
                }
            }
        }
        expectMisuse(result, naming: ["executing a Statement", "`SELECT 42`", "escaped from the `read`"])
    }

    @Test func cursor() async {
        let result = await exitTest {
            await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
                try await onOwnThread {
                    let queue = try DatabaseQueue()
                    let cursor = try queue.read { db in try Int.fetchCursor(db, sql: "SELECT 1 UNION ALL SELECT 2") }
                    _ = try cursor.next()
                }
            }
        }
        expectMisuse(result, naming: ["RecordCursor.next()", "escaped from the `read`"])
    }

    // MARK: What stays allowed

    /// A statement from `makeStatement` is the caller's to keep: it runs again in a later
    /// access to the same connection, whichever thread that access runs on.
    @Test func keptStatementRunsInALaterAccess() async throws {
        let queue = try DatabaseQueue()
        let box = EscapeBox()
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE t (x)")
            box.statement = try db.makeStatement(sql: "INSERT INTO t VALUES (1)")
        }
        try await queue.write { _ in try box.statement?.execute() }
        try await runOnBackgroundThread { try queue.write { _ in try box.statement?.execute() } }
        try await runOnBackgroundThread { try queue.writeWithoutTransaction { _ in try box.statement?.execute() } }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 3)
        box.statement = nil
    }

    /// Every kind of access lends the connection to its closure, synchronous or not, on
    /// whichever thread runs it; so do preparations and the migrator's scratch connection.
    @Test func everyAccessLendsItsConnection() async throws {
        try await withTemporaryDatabasePath { path in
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.add(function: DatabaseFunction("seven", argumentCount: 0) { _ in 7 })
                _ = db.isInsideTransaction
            }
            let pool = try DatabasePool(path: path, configuration: configuration)
            var migrator = DatabaseMigrator()
            migrator.eraseDatabaseOnSchemaChange = true
            migrator.registerMigration("t") { db in try db.execute(sql: "CREATE TABLE t (x)") }
            try await migrator.migrate(pool)
            // Compares with a scratch connection opened inside the migration's access.
            try await runOnBackgroundThread { [migrator] in try migrator.migrate(pool) }
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (seven())") }
            try await pool.writeWithoutTransaction { db in _ = db.lastInsertedRowID }
            try await pool.barrierWriteWithoutTransaction { db in _ = db.changesCount }
            let sum = try await runOnBackgroundThread {
                try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (seven())") }
                try pool.writeWithoutTransaction { db in _ = db.totalChangesCount }
                try pool.barrierWriteWithoutTransaction { db in _ = db.isInsideTransaction }
                return try pool.read { db in try Int.fetchOne(db, sql: "SELECT SUM(x) FROM t") }
            }
            #expect(sum == 14)
            #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t") } == [7, 7])
            let viaAsyncRead = try await withCheckedThrowingContinuation { continuation in
                pool.asyncRead({ db in try Int.fetchCursor(db, sql: "SELECT x FROM t").collect() }) {
                    continuation.resume(with: $0)
                }
            }
            #expect(viaAsyncRead == [7, 7])
        }
    }
}
