import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// A synchronous access from inside a closure of the same queue or pool would wait for itself;
/// it throws instead.
@Suite(.timeLimit(.minutes(5))) struct ReentrancyTests {
    func isReentrancyError(_ error: any Error) -> Bool {
        (error as? DatabaseAccessError)?.kind == .reentrantAccess
    }

    /// Runs `inner` inside `outer` and returns the error the inner access threw.
    func innerError(_ outer: ((Database) throws -> Void) throws -> Void, _ inner: @escaping () throws -> Void) throws -> (any Error)? {
        var caught: (any Error)?
        try outer { _ in
            do { try inner() } catch { caught = error }
        }
        return caught
    }

    @Test func queueWriteInsideWrite() throws {
        let queue = try DatabaseQueue()
        let error = try innerError({ try queue.write($0) }) { try queue.write { _ in } }
        #expect(error.map(isReentrancyError) == true)
        let message = (error as? DatabaseAccessError)?.message ?? ""
        #expect(message.contains("DatabaseQueue.write"))
        // The queue keeps working.
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT 1") } == 1)
    }

    @Test func queueReadInsideRead() throws {
        let queue = try DatabaseQueue()
        let error = try innerError({ try queue.read($0) }) { _ = try queue.read { _ in 1 } }
        #expect(error.map(isReentrancyError) == true)
    }

    @Test func queueMixedAccesses() throws {
        let queue = try DatabaseQueue()
        #expect(try innerError({ try queue.write($0) }) { _ = try queue.read { _ in 1 } }.map(isReentrancyError) == true)
        #expect(try innerError({ try queue.read($0) }) { try queue.writeWithoutTransaction { _ in } }.map(isReentrancyError) == true)
        #expect(
            try innerError({ try queue.writeWithoutTransaction($0) }) { try queue.barrierWriteWithoutTransaction { _ in } }.map(
                isReentrancyError) == true)
    }

    @Test func poolWriteInsideWrite() throws {
        try withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            let error = try innerError({ try pool.write($0) }) { try pool.write { _ in } }
            #expect(error.map(isReentrancyError) == true)
            #expect((error as? DatabaseAccessError)?.message.contains("DatabasePool.write") == true)
            try pool.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        }
    }

    @Test func poolReadInsideRead() throws {
        try withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            let error = try innerError({ try pool.read($0) }) { _ = try pool.read { _ in 1 } }
            #expect(error.map(isReentrancyError) == true)
            #expect((error as? DatabaseAccessError)?.message.contains("DatabasePool.read") == true)
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") } == 1)
        }
    }

    @Test func poolMixedAccesses() throws {
        try withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            #expect(try innerError({ try pool.write($0) }) { _ = try pool.read { _ in 1 } }.map(isReentrancyError) == true)
            #expect(try innerError({ try pool.read($0) }) { try pool.write { _ in } }.map(isReentrancyError) == true)
            #expect(
                try innerError({ try pool.writeWithoutTransaction($0) }) { try pool.barrierWriteWithoutTransaction { _ in } }.map(
                    isReentrancyError) == true)
        }
    }

    @Test func accessToAnotherQueueFromInsideIsAllowed() throws {
        let first = try DatabaseQueue()
        let second = try DatabaseQueue()
        let value = try first.write { _ in try second.read { db in try Int.fetchOne(db, sql: "SELECT 7") } }
        #expect(value == 7)
    }

    @Test func reentrantWriteDoesNotRollBackTheOuterWrite() throws {
        let queue = try makePlayersQueue()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO players (name) VALUES ('outer')")
            #expect(throws: DatabaseAccessError.self) { try queue.write { _ in } }
        }
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM players") } == ["outer"])
    }
}
