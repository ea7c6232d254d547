import Dispatch
import StrataSQLite
import StrataTestSupport
import Testing

/// `asyncRead` starts a read without a task: what the observation layer runs from a commit
/// announcement.
@Suite(.timeLimit(.minutes(5))) struct AsyncReadTests {
    /// Waits for one `asyncRead` and returns what `body` read, or the error it was handed.
    func readLater<T: Sendable>(
        _ reader: any DatabaseReader, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            reader.asyncRead(body) { result in continuation.resume(with: result) }
        }
    }

    func makePool(path: String, maximumReaderCount: Int = 5) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "game"
        configuration.maximumReaderCount = maximumReaderCount
        let pool = try DatabasePool(path: path, configuration: configuration)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)") }
        return pool
    }

    @Test func poolReadsOnAReaderAndSeesEveryEarlierCommit() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            let (count, name) = try await readLater(pool) { db in
                (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t"), db.description)
            }
            #expect(count == 2)
            #expect(name == "game.reader1")
        }
    }

    @Test func poolReadIsReadOnly() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let error = await #expect(throws: DatabaseError.self) {
                try await readLater(pool) { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
            }
            #expect(error?.sql == "INSERT INTO t VALUES (3)")
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
        }
    }

    @Test func poolReadKeepsItsSnapshotWhileTheWriterCommits() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            let readerHasRead = DispatchSemaphore(value: 0)
            let writerCommitted = DispatchSemaphore(value: 0)
            async let counts = readLater(pool) { db in
                let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
                readerHasRead.signal()
                try waitOrThrow(writerCommitted)
                return [before, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")]
            }
            #expect(await wait(for: readerHasRead))
            try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            writerCommitted.signal()
            #expect(try await counts == [1, 1])
        }
    }

    @Test func poolReadWaitsForAFreeReaderWithoutBlockingTheCaller() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path, maximumReaderCount: 1)
            let held = try await HeldRead(on: pool)
            let laterReadRan = DispatchSemaphore(value: 0)
            // Returns at once although the only reader is busy.
            pool.asyncRead { db in
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
            } completion: { result in
                if case .success(1) = result { laterReadRan.signal() }
            }
            // A bounded wait, expected to time out: the read waits for the reader.
            #expect(await wait(for: laterReadRan, seconds: 0.3) == false)
            held.release()
            #expect(try await held.read.value == 1)
            #expect(await wait(for: laterReadRan))
            #expect(pool.openReaderCount == 1)
        }
    }

    @Test func completionRunsOnceTheReaderIsFreeForTheNextRead() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path, maximumReaderCount: 1)
            // A read started from a completion (an observer's follow-up fetch) gets the same,
            // only reader: the first job gave it back before calling its completion.
            let names = try await withCheckedThrowingContinuation { continuation in
                pool.asyncRead({ db in db.description }) { first in
                    pool.asyncRead({ db in db.description }) { second in
                        continuation.resume(with: first.flatMap { first in second.map { [first, $0] } })
                    }
                }
            }
            #expect(names == ["game.reader1", "game.reader1"])
            #expect(pool.openReaderCount == 1)
        }
    }

    @Test func closedPoolHandsTheClosedError() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try makePool(path: path)
            pool.close()
            let error = await #expect(throws: DatabaseAccessError.self) {
                try await readLater(pool) { _ in 1 }
            }
            #expect(error?.kind == .closed)
        }
    }

    @Test func queueReadsInAReadOnlyTransaction() async throws {
        let queue = try makePlayersQueue()
        try await queue.write { db in try db.execute(sql: "INSERT INTO players (name) VALUES ('Ada')") }
        #expect(try await readLater(queue) { db in try String.fetchOne(db, sql: "SELECT name FROM players") } == "Ada")
        await #expect(throws: DatabaseError.self) {
            try await readLater(queue) { db in try db.execute(sql: "DELETE FROM players") }
        }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM players") } == 1)
    }

    @Test func closedQueueHandsTheClosedError() async throws {
        let queue = try makePlayersQueue()
        queue.close()
        let error = await #expect(throws: DatabaseAccessError.self) {
            try await readLater(queue) { _ in 1 }
        }
        #expect(error?.kind == .closed)
    }
}
