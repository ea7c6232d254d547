import Dispatch
import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct InMemoryPoolTests {
    @Test func writerAndReadersShareTheData() async throws {
        let pool = try DatabasePool(named: uniqueMemoryName())
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)")
        }
        #expect(try await pool.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 2])
        #expect(try await runOnBackgroundThread { try pool.read { db in try Int.fetchOne(db, sql: "SELECT SUM(x) FROM t") } } == 3)
        #expect(pool.openReaderCount >= 1)
        // Readers are read-only.
        await #expect(throws: DatabaseError.self) {
            try await pool.read { db in try db.execute(sql: "DELETE FROM t") }
        }
        try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 3)
    }

    @Test func poolsWithDifferentNamesAreIsolated() throws {
        let first = try DatabasePool(named: uniqueMemoryName())
        let second = try DatabasePool(named: uniqueMemoryName())
        // The same table in each: no "table already exists", and separate contents.
        try first.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES ('first')") }
        try second.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES ('second'), ('second')") }
        #expect(try first.read { db in try String.fetchAll(db, sql: "SELECT x FROM t") } == ["first"])
        #expect(try second.read { db in try String.fetchAll(db, sql: "SELECT x FROM t") } == ["second", "second"])
    }

    @Test func poolsAndQueuesWithTheSameNameShare() throws {
        let name = uniqueMemoryName()
        let pool = try DatabasePool(named: name)
        let queue = try DatabaseQueue(named: name)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT x FROM t") } == 1)
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 2)
    }

    @Test func namesWithSpecialCharactersAreIsolated() throws {
        let base = uniqueMemoryName()
        let first = try DatabasePool(named: base + " a/b?c")
        let second = try DatabasePool(named: base + " a/b")
        try first.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        #expect(try second.read { db in try db.tableExists("t") } == false)
        #expect(try first.read { db in try db.tableExists("t") })
    }

    @Test func readsRunInParallelInMemory() async throws {
        let pool = try DatabasePool(named: uniqueMemoryName())
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        let firstStarted = DispatchSemaphore(value: 0)
        let secondStarted = DispatchSemaphore(value: 0)
        async let first = pool.read { db in
            _ = try Int.fetchOne(db, sql: "SELECT x FROM t")
            firstStarted.signal()
            return secondStarted.wait(timeout: .now() + 45) == .success
        }
        async let second = pool.read { db in
            _ = try Int.fetchOne(db, sql: "SELECT x FROM t")
            secondStarted.signal()
            return firstStarted.wait(timeout: .now() + 45) == .success
        }
        #expect(try await [first, second] == [true, true])
    }

    @Test func writeWaitsForARunningReadInMemory() async throws {
        // memdb has no WAL: a commit waits for running reads (within the busy timeout).
        let pool = try DatabasePool(named: uniqueMemoryName())
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        let readStarted = DispatchSemaphore(value: 0)
        let releaseRead = DispatchSemaphore(value: 0)
        let read = Task {
            try await pool.read { db in
                let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
                readStarted.signal()
                try waitOrThrow(releaseRead)
                return before
            }
        }
        #expect(await wait(for: readStarted))
        let write = Task { try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") } }
        releaseRead.signal()
        #expect(try await read.value == 1)
        try await write.value
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 2)
    }

    @Test func migratingAnInMemoryPool() throws {
        let pool = try DatabasePool(named: uniqueMemoryName())
        var migrator = DatabaseMigrator()
        migrator.registerMigration("create") { db in try db.execute(sql: "CREATE TABLE t (x)") }
        try migrator.migrate(pool)
        #expect(try pool.read { db in try migrator.appliedIdentifiers(db) } == ["create"])
    }
}
