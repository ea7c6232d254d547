import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct TransactionTests {
    struct Failure: Error {}

    func makeQueue() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER)") }
        return queue
    }

    func values(_ queue: DatabaseQueue) throws -> [Int] {
        try queue.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") }
    }

    @Test func writeCommits() throws {
        let queue = try makeQueue()
        let wasInside = try queue.write { db throws in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            return db.isInsideTransaction
        }
        #expect(wasInside)
        #expect(try values(queue) == [1])
    }

    @Test func writeRollsBackOnThrow() throws {
        let queue = try makeQueue()
        #expect(throws: Failure.self) {
            try queue.write { db throws in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                throw Failure()
            }
        }
        #expect(try values(queue) == [])
        try queue.writeWithoutTransaction { db in #expect(!db.isInsideTransaction) }
    }

    @Test func asyncWriteRollsBackOnThrow() async throws {
        let queue = try makeQueue()
        await #expect(throws: Failure.self) {
            try await queue.write { db throws in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                throw Failure()
            }
        }
        #expect(try values(queue) == [])
    }

    @Test(arguments: [TransactionKind.deferred, .immediate, .exclusive])
    func inTransactionCommitsAndRollsBack(kind: TransactionKind) throws {
        let queue = try makeQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.inTransaction(kind) {
                #expect(db.isInsideTransaction)
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                return .commit
            }
            #expect(!db.isInsideTransaction)
            try db.inTransaction(kind) {
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                return .rollback
            }
            #expect(throws: Failure.self) {
                try db.inTransaction(kind) {
                    try db.execute(sql: "INSERT INTO t VALUES (3)")
                    throw Failure()
                }
            }
            #expect(!db.isInsideTransaction)
        }
        #expect(try values(queue) == [1])
    }

    /// The kinds differ in when they lock: checked against a second connection to the same file.
    @Test func transactionKindsTakeLocksAsDocumented() throws {
        try withTemporaryDatabasePath { path in
            var configuration = Configuration()
            configuration.busyTimeout = .zero
            let first = try DatabaseQueue(path: path, configuration: configuration)
            let second = try DatabaseQueue(path: path, configuration: configuration)
            try first.write { db in try db.execute(sql: "CREATE TABLE t (x INTEGER)") }

            try first.writeWithoutTransaction { db throws in
                // DEFERRED takes no lock until the first access: another connection can write.
                try db.inTransaction(.deferred) {
                    try second.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
                    return .commit
                }
                // IMMEDIATE takes the write lock at BEGIN: another writer is busy, readers are not.
                try db.inTransaction(.immediate) { () throws -> TransactionCompletion in
                    let error = #expect(throws: DatabaseError.self) {
                        try second.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
                    }
                    #expect(error?.resultCode == .busy)
                    #expect(try second.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
                    return .commit
                }
                // EXCLUSIVE (rollback journal) also keeps readers out.
                try db.inTransaction(.exclusive) {
                    try db.execute(sql: "INSERT INTO t VALUES (3)")
                    let error = #expect(throws: DatabaseError.self) {
                        try second.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") }
                    }
                    #expect(error?.resultCode == .busy)
                    return .commit
                }
            }
            #expect(try second.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") } == [1, 3])
        }
    }

    @Test func transactionReturnsTheBodysValue() throws {
        let queue = try makeQueue()
        let count = try queue.writeWithoutTransaction { db throws in
            try db.transaction {
                try db.execute(sql: "INSERT INTO t VALUES (1), (2)")
                return try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t")
            }
        }
        #expect(count == 2)
        #expect(try values(queue) == [1, 2])
    }

    @Test func innerSavepointRollbackKeepsOuterChanges() throws {
        let queue = try makeQueue()
        try queue.write { db throws in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            try db.inSavepoint {
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                return .rollback
            }
            try db.inSavepoint {
                try db.execute(sql: "INSERT INTO t VALUES (3)")
                return .commit
            }
            #expect(db.isInsideTransaction)
        }
        #expect(try values(queue) == [1, 3])
    }

    @Test func throwingSavepointRollsBackOnlyItself() throws {
        let queue = try makeQueue()
        try queue.write { db throws in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            #expect(throws: Failure.self) {
                try db.inSavepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    throw Failure()
                }
            }
            #expect(db.isInsideTransaction)
            try db.execute(sql: "INSERT INTO t VALUES (4)")
        }
        #expect(try values(queue) == [1, 4])
    }

    @Test func deeplyNestedSavepoints() throws {
        let queue = try makeQueue()
        try queue.write { db throws in
            try db.inSavepoint {
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                try db.inSavepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    try db.inSavepoint {
                        try db.execute(sql: "INSERT INTO t VALUES (3)")
                        return .rollback
                    }
                    return .commit
                }
                try db.inSavepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (4)")
                    try db.inSavepoint {
                        try db.execute(sql: "INSERT INTO t VALUES (5)")
                        return .commit
                    }
                    // Rolling back the middle savepoint undoes the committed inner one too.
                    return .rollback
                }
                return .commit
            }
        }
        #expect(try values(queue) == [1, 2])
    }

    @Test func outerRollbackUndoesReleasedSavepoints() throws {
        let queue = try makeQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.inTransaction {
                try db.inSavepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (1)")
                    return .commit
                }
                return .rollback
            }
        }
        #expect(try values(queue) == [])
    }

    @Test func savepointOutsideATransactionBeginsOne() throws {
        let queue = try makeQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.inSavepoint {
                #expect(db.isInsideTransaction)
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                return .commit
            }
            #expect(!db.isInsideTransaction)
            try db.inSavepoint {
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                return .rollback
            }
            #expect(!db.isInsideTransaction)
        }
        #expect(try values(queue) == [1])
    }

    @Test func failedCommitRollsBackAndReportsTheError() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(
                sql: """
                    CREATE TABLE parents (id INTEGER PRIMARY KEY);
                    CREATE TABLE children (parentID INTEGER REFERENCES parents(id) DEFERRABLE INITIALLY DEFERRED);
                    """)
        }
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.execute(sql: "INSERT INTO children VALUES (42)") }
        }
        #expect(error?.extendedResultCode == .constraintForeignKey)
        #expect(error?.sql == "COMMIT TRANSACTION")
        try queue.writeWithoutTransaction { db in #expect(!db.isInsideTransaction) }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM children") } == 0)
    }

    @Test func errorInsideTransactionKeepsConnectionUsable() throws {
        let queue = try makeQueue()
        #expect(throws: DatabaseError.self) {
            try queue.write { db throws in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                try db.execute(sql: "INSERT INTO nowhere VALUES (1)")
            }
        }
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        #expect(try values(queue) == [2])
    }

    @Test func savepointReturnsTheBodysValueAndUndoesOnlyItselfOnThrow() throws {
        let queue = try makeQueue()
        try queue.write { db in
            let inserted: Int? = try db.savepoint {
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                return nil
            }
            #expect(inserted == nil)
            #expect(throws: Failure.self) {
                try db.savepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (2)")
                    throw Failure()
                }
            }
            #expect(db.isInsideTransaction)
        }
        #expect(try values(queue) == [1])
    }
}
