import Dispatch
import Foundation
import StrataSQLite
import StrataTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(5))) struct DatabasePoolTests {
    func makePool(path: String, configure: (inout Configuration) -> Void = { _ in }) throws -> DatabasePool {
        var configuration = Configuration()
        configure(&configuration)
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
        return pool
    }

    @Test func walModeIsEnabled() throws {
        try withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            #expect(try pool.write { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
            #expect(try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
            #expect(FileManager.default.fileExists(atPath: path + "-wal"))
            #expect(pool.location == .file(path: path))
        }
    }

    @Test func readerSeesItsSnapshotWhileTheWriterCommits() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let readerHasRead = DispatchSemaphore(value: 0)
            let writerCommitted = DispatchSemaphore(value: 0)
            let reader = Task {
                try await pool.read { db in
                    let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") ?? -1
                    readerHasRead.signal()
                    try waitOrThrow(writerCommitted)
                    let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") ?? -1
                    return [before, after]
                }
            }
            #expect(await wait(for: readerHasRead))
            // The write commits while the read is open (WAL lets it).
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            writerCommitted.signal()
            #expect(try await reader.value == [1, 1])
            // A new read sees the commit.
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 2)
        }
    }

    @Test func syncReadOnABackgroundThreadKeepsItsSnapshot() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let readerStarted = DispatchSemaphore(value: 0)
            let writerCommitted = DispatchSemaphore(value: 0)
            async let counts = runOnBackgroundThread {
                try pool.read { db in
                    // The snapshot is taken when the read starts, before its first query.
                    readerStarted.signal()
                    try waitOrThrow(writerCommitted)
                    return try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x")
                }
            }
            #expect(await wait(for: readerStarted))
            try await runOnBackgroundThread {
                try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            }
            writerCommitted.signal()
            #expect(try await counts == [1])
        }
    }

    @Test func readersRunInParallel() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let firstStarted = DispatchSemaphore(value: 0)
            let secondStarted = DispatchSemaphore(value: 0)
            // Each read waits until the other has started: possible only if they run at once.
            async let first = pool.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
                firstStarted.signal()
                return secondStarted.wait(timeout: .now() + 45) == .success
            }
            async let second = pool.read { db in
                _ = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
                secondStarted.signal()
                return firstStarted.wait(timeout: .now() + 45) == .success
            }
            let results = try await [first, second]
            #expect(results == [true, true])
            #expect(pool.openReaderCount == 2)
        }
    }

    @Test func readsRunWhileTheWriterIsBusy() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let writerInside = DispatchSemaphore(value: 0)
            let releaseWriter = DispatchSemaphore(value: 0)
            let writer = Task {
                try await pool.write { db in
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    writerInside.signal()
                    try waitOrThrow(releaseWriter)
                }
            }
            #expect(await wait(for: writerInside))
            // The writer holds its transaction open; a read still runs and sees the last commit.
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
            releaseWriter.signal()
            try await writer.value
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 2)
        }
    }

    @Test func readIsReadOnly() throws {
        try withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let error = #expect(throws: DatabaseError.self) {
                try pool.read { db in try db.execute(sql: "INSERT INTO t VALUES (5)") }
            }
            #expect(error?.resultCode == .readOnly)
            #expect(try pool.read { db in db.isReadOnly })
            #expect(try pool.write { db in db.isReadOnly } == false)
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
        }
    }

    @Test func barrierWaitsForRunningReads() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let readStarted = DispatchSemaphore(value: 0)
            let releaseRead = DispatchSemaphore(value: 0)
            let barrierRan = DispatchSemaphore(value: 0)
            let readFinished = SharedFlag()
            let read = Task {
                try await pool.read { _ in
                    readStarted.signal()
                    try waitOrThrow(releaseRead)
                    readFinished.value.store(true, ordering: .sequentiallyConsistent)
                }
            }
            #expect(await wait(for: readStarted))
            let barrier = Task {
                try await runOnBackgroundThread {
                    try pool.barrierWriteWithoutTransaction { db in
                        barrierRan.signal()
                        // Must only run once the read is over.
                        return readFinished.value.load(ordering: .sequentiallyConsistent)
                    }
                }
            }
            // While the read runs, the barrier does not (a bounded wait, expected to time out).
            #expect(await wait(for: barrierRan, seconds: 0.3) == false)
            releaseRead.signal()
            try await read.value
            #expect(try await barrier.value == true)
        }
    }

    @Test func readsQueuedBehindABarrierWaitForIt() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let barrierInside = DispatchSemaphore(value: 0)
            let releaseBarrier = DispatchSemaphore(value: 0)
            let barrier = Task {
                try await pool.barrierWriteWithoutTransaction { db in
                    barrierInside.signal()
                    try waitOrThrow(releaseBarrier)
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                }
            }
            #expect(await wait(for: barrierInside))
            let read = Task { try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } }
            releaseBarrier.signal()
            try await barrier.value
            // The read was admitted after the barrier, so it sees its write.
            #expect(try await read.value == 2)
        }
    }

    @Test func maximumReaderCountIsRespected() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path) { $0.maximumReaderCount = 2 }
            let started = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let active = SharedCounter()
            let maximumActive = SharedCounter()
            let reads = (0..<3).map { _ in
                Task {
                    try await pool.read { db in
                        let now = active.value.add(1, ordering: .sequentiallyConsistent).newValue
                        maximumActive.value.max(now, ordering: .sequentiallyConsistent)
                        started.signal()
                        try waitOrThrow(release)
                        active.value.subtract(1, ordering: .sequentiallyConsistent)
                        return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
                    }
                }
            }
            #expect(await wait(for: started))
            #expect(await wait(for: started))
            // Two reads run; the third waits for a reader (a bounded wait, expected to time out).
            #expect(await wait(for: started, seconds: 0.3) == false)
            #expect(pool.openReaderCount == 2)
            for _ in 0..<3 { release.signal() }
            for read in reads { #expect(try await read.value == 1) }
            #expect(maximumActive.value.load(ordering: .sequentiallyConsistent) == 2)
            #expect(pool.openReaderCount == 2)
        }
    }

    @Test func manyConcurrentReadsAndWrites() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path) { $0.maximumReaderCount = 3 }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<20 {
                    group.addTask {
                        try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [index + 10]) }
                    }
                    group.addTask {
                        let count = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } ?? 0
                        #expect((1...21).contains(count))
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 21)
            #expect(pool.openReaderCount <= 3)
        }
    }

    @Test func writeRollsBackOnThrow() async throws {
        struct Failure: Error {}
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            await #expect(throws: Failure.self) {
                try await pool.write { db in
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    throw Failure()
                }
            }
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
        }
    }

    @Test func closedPoolRefusesAccess() throws {
        try withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
            pool.close()
            let readError = #expect(throws: DatabaseAccessError.self) { try pool.read { _ in 1 } }
            #expect(readError?.kind == .closed)
            let writeError = #expect(throws: DatabaseAccessError.self) { try pool.write { _ in } }
            #expect(writeError?.kind == .closed)
            pool.close()  // idempotent
        }
    }

    @Test func dataPersistsAfterClosing() throws {
        try withTemporaryDatabasePath { path in
            do {
                let pool = try makePool(path: path)
                try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
                pool.close()
            }
            let queue = try DatabaseQueue(path: path)
            #expect(try queue.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 2])
        }
    }

    @Test func connectionDescriptions() throws {
        try withTemporaryDatabasePath { path in
            let pool = try makePool(path: path) { $0.label = "game" }
            #expect(try pool.write { db in db.description } == "game.writer")
            #expect(try pool.read { db in db.description } == "game.reader1")
        }
    }
}
