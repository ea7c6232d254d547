import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// Texts of several statements: argument counts are checked before anything runs, and a NUL
/// character is refused.
@Suite(.timeLimit(.minutes(5))) struct MultipleStatementTests {
    func makeQueue() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1)") }
        return queue
    }

    func values(_ queue: DatabaseQueue) throws -> [Int] {
        try queue.read { db in try Int.fetchAll(db, sql: "SELECT a FROM t ORDER BY rowid") }
    }

    @Test func tooManyArgumentsRunNothing() throws {
        let queue = try makeQueue()
        let error = try #require(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO t (a) VALUES (?); INSERT INTO t (a) VALUES (?)", arguments: [1, 2, 3])
            }
        }
        #expect(error.resultCode == .range)
        #expect(error.message.contains("2 parameter(s), 3 given"))
        #expect(try values(queue) == [1])
    }

    @Test func tooFewArgumentsRunNothing() throws {
        let queue = try makeQueue()
        #expect(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO t (a) VALUES (?); INSERT INTO t (a) VALUES (?)", arguments: [7])
            }
        }
        #expect(try values(queue) == [1])
    }

    @Test func argumentsAreSpreadOverTheStatementsInOrder() throws {
        let queue = try makeQueue()
        try queue.writeWithoutTransaction { db in
            try db.execute(
                sql: "INSERT INTO t (a) VALUES (?); UPDATE t SET a = a * ? WHERE a = ?; INSERT INTO t (a) VALUES (?)",
                arguments: [2, 10, 2, 3])
        }
        #expect(try values(queue) == [1, 20, 3])
    }

    @Test func aStatementOnATableTheTextCreatesStillRuns() throws {
        let queue = try makeQueue()
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE u (b INTEGER); INSERT INTO u (b) VALUES (?), (?)", arguments: [4, 5])
        }
        #expect(try queue.read { db in try Int.fetchAll(db, sql: "SELECT b FROM u") } == [4, 5])
    }

    @Test func aTextThatCreatesItsTableWithWrongArgumentsIsRolledBack() throws {
        let queue = try makeQueue()
        #expect(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in
                try db.execute(sql: "CREATE TABLE u (b INTEGER); INSERT INTO u (b) VALUES (?)", arguments: [4, 5])
            }
        }
        #expect(try queue.read { db in try db.tableExists("u") } == false)
    }

    @Test func sqlWithANulCharacterIsRefused() throws {
        let queue = try makeQueue()
        let error = try #require(throws: DatabaseError.self) {
            try queue.writeWithoutTransaction { db in try db.execute(sql: "UPDATE t SET a = 2\u{0}; DELETE FROM t") }
        }
        #expect(error.resultCode == .misuse)
        #expect(error.message.contains("NUL"))
        #expect(try values(queue) == [1])
        #expect(throws: DatabaseError.self) {
            try queue.read { db in try Int.fetchAll(db, sql: "SELECT a FROM t\u{0} WHERE 0") }
        }
        #expect(throws: DatabaseError.self) {
            try queue.read { db in _ = try db.makeStatement(sql: "SELECT 1\u{0}") }
        }
    }
}
