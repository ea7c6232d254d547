import BenchSupport
import Foundation

/// One library under test. Every method marked "timed" is what the harness measures; the
/// others prepare state and are not measured.
protocol Contender: AnyObject {
    var name: String { get }

    /// Opens the library's connection(s) on a WAL database file that already holds `seed`.
    func open(path: String) throws
    func close()

    /// Untimed: runs SQL through the library's own writer (table resets, checkpoints).
    func executeUntimed(_ statements: [String]) throws

    /// Untimed: builds the library's records from the source rows.
    func load(_ rows: [SourceRow])

    /// Timed: fetches every row of `items` into records, in one read.
    func fetchAll() throws -> Int
    /// Timed: inserts the loaded records in one transaction.
    func insertAll() throws -> Int
    /// Timed: fetches each key, one statement per key, in one read.
    func fetchByKey(_ keys: [Int64]) throws -> Int
    /// Timed: updates the loaded records (every column but the key) by key, in one transaction.
    func updateByKey() throws -> Int
    /// Timed: deletes each key, in one transaction.
    func deleteByKey(_ keys: [Int64]) throws -> Int
    /// Timed: `tasks` readers each fetch every row `readsPerTask` times, in parallel, while a
    /// writer commits one-row transactions until they are done.
    func concurrentReads(tasks: Int, readsPerTask: Int, rowCount: Int) throws -> Int

    /// Whether the library has an honest equivalent of the workload named `workload`; the
    /// harness skips (and reports nothing for) the ones it has not.
    func supports(_ workload: String) -> Bool
}

extension Contender {
    func supports(_ workload: String) -> Bool { true }

    /// Untimed reset shared by all: `items` with the first `count` rows of `seed`, then a
    /// checkpoint so every iteration starts from the same, empty WAL.
    func resetItems(count: Int) throws {
        try executeUntimed(Schema.resetSQL(count: count) + ["PRAGMA wal_checkpoint(TRUNCATE)"])
    }
}

/// Runs `body` on a new thread per element and waits for all of them.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        let thread = Thread {
            body(index)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}

/// A flag and a counter shared with a writer thread.
final class WriterControl: @unchecked Sendable {
    private let lock = NSLock()
    private var stopRequested = false
    private let finished = DispatchSemaphore(value: 0)
    private(set) var commits = 0
    private(set) var error: (any Error)?

    var shouldStop: Bool {
        lock.lock(); defer { lock.unlock() }
        return stopRequested
    }

    /// Starts `commit` in a loop on a new thread until `stop()`.
    func start(_ commit: @escaping @Sendable (Int64) throws -> Void, keyCount: Int) {
        let thread = Thread { [self] in
            var key: Int64 = 1
            while !shouldStop {
                do {
                    try commit(key)
                } catch {
                    lock.lock(); self.error = error; lock.unlock()
                    break
                }
                commits += 1
                key = key % Int64(max(keyCount, 1)) + 1
            }
            finished.signal()
        }
        thread.start()
    }

    /// With STRATA_BENCH_VERBOSE set, logs how many commits the writer made: a faster writer
    /// takes more of the two cores from the readers, and grows the WAL they read through.
    func logCommits(_ library: String) {
        guard ProcessInfo.processInfo.environment["STRATA_BENCH_VERBOSE"] != nil else { return }
        log("    \(library): writer committed \(commits) times")
    }

    func stop() throws {
        lock.lock(); stopRequested = true; lock.unlock()
        finished.wait()
        if let error { throw error }
    }
}

/// Runs async work from synchronous code (the harness runs on the main thread, which is not
/// one of the cooperative pool's threads, so blocking it is safe).
func blockingAwait<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        do { box.result = .success(try await operation()) } catch { box.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try box.result!.get()
}

final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
