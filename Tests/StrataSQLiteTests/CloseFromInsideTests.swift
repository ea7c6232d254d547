import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// `close()` called from inside one of the queue's or pool's own closures neither deadlocks nor
/// traps: the connection closes when the closure returns.
@Suite(.timeLimit(.minutes(5))) struct CloseFromInsideTests {
    @Test func aQueueClosedFromInsideItsOwnWriteClosesAfterIt() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER)")
            queue.close()
            try db.execute(sql: "INSERT INTO t VALUES (1)")  // the closure still runs to its end
        }
        let error = try #require(throws: DatabaseAccessError.self) {
            try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
        }
        #expect(error.kind == .closed)
    }

    @Test func aQueueClosedFromInsideAnAsyncAccessClosesAfterIt() async throws {
        let queue = try DatabaseQueue()
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER)")
            queue.close()
        }
        await #expect(throws: DatabaseAccessError.self) {
            try await queue.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        }
    }

    @Test func aPoolClosedFromInsideAReadClosesEverything() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            try await pool.write { db in try db.execute(sql: "CREATE TABLE t (a INTEGER)") }
            let count = try await pool.read { db in
                pool.close()
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
            }
            #expect(count == 0)
            await #expect(throws: DatabaseAccessError.self) {
                try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
            }
        }
    }
}
