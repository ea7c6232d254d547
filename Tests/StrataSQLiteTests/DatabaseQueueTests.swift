import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct DatabaseQueueTests {
    @Test func fileQueuePersistsAcrossReopening() throws {
        try withTemporaryDatabasePath { path in
            do {
                let queue = try DatabaseQueue(path: path)
                #expect(queue.location == .file(path: path))
                try queue.write { db in
                    try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES ('kept')")
                }
                queue.close()
            }
            #expect(FileManager.default.fileExists(atPath: path))
            let reopened = try DatabaseQueue(path: path)
            #expect(try reopened.read { db in try String.fetchOne(db, sql: "SELECT x FROM t") } == "kept")
        }
    }

    @Test func unnamedInMemoryQueuesArePrivate() throws {
        let first = try DatabaseQueue()
        let second = try DatabaseQueue()
        try first.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        #expect(try first.read { db in try db.tableExists("t") })
        #expect(try second.read { db in try db.tableExists("t") } == false)
    }

    @Test func namedInMemoryQueuesShareTheirDatabase() throws {
        let name = uniqueMemoryName()
        let first = try DatabaseQueue(named: name)
        let second = try DatabaseQueue(named: name)
        let other = try DatabaseQueue(named: uniqueMemoryName())
        try first.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
        #expect(try second.read { db in try Int.fetchOne(db, sql: "SELECT x FROM t") } == 1)
        #expect(try other.read { db in try db.tableExists("t") } == false)
    }

    @Test func readIsReadOnly() throws {
        let queue = try makePlayersQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.read { db in try db.execute(sql: "INSERT INTO players (name) VALUES ('sneaky')") }
        }
        #expect(error?.resultCode == .readOnly)
        // The failed read left the connection writable, and nothing was written.
        try queue.write { db in try db.execute(sql: "INSERT INTO players (name) VALUES ('legit')") }
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM players") } == ["legit"])
    }

    @Test func asyncReadIsReadOnly() async throws {
        let queue = try makePlayersQueue()
        await #expect(throws: DatabaseError.self) {
            try await queue.read { db in try db.execute(sql: "DELETE FROM players") }
        }
        try await queue.write { db in try db.execute(sql: "INSERT INTO players (name) VALUES ('legit')") }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM players") } == 1)
    }

    @Test func readRunsInATransaction() throws {
        let queue = try makePlayersQueue()
        #expect(try queue.read { db in db.isInsideTransaction })
        #expect(try queue.writeWithoutTransaction { db in db.isInsideTransaction } == false)
    }

    @Test func asyncReadAndWrite() async throws {
        let queue = try makePlayersQueue()
        let id = try await queue.write { db in
            try db.execute(sql: "INSERT INTO players (name, score) VALUES (?, ?)", arguments: ["Ann", 3])
            return db.lastInsertedRowID
        }
        #expect(id == 1)
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT score FROM players WHERE id = ?", arguments: [id]) } == 3)
        let changed = try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE players SET score = score + 1")
            return db.changesCount
        }
        #expect(changed == 1)
        let total = try await queue.barrierWriteWithoutTransaction { db in db.totalChangesCount }
        #expect(total >= 2)
    }

    @Test func concurrentAsyncWritesAreSerialized() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in try db.execute(sql: "CREATE TABLE counter (n INTEGER); INSERT INTO counter VALUES (0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await queue.write { db in
                        let n = try Int.fetchOne(db, sql: "SELECT n FROM counter") ?? 0
                        try db.execute(sql: "UPDATE counter SET n = ?", arguments: [n + 1])
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT n FROM counter") } == 50)
    }

    @Test func readOnlyConfigurationRefusesWrites() throws {
        try withTemporaryDatabasePath { path in
            let writable = try DatabaseQueue(path: path)
            try writable.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
            writable.close()
            var configuration = Configuration()
            configuration.readOnly = true
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT x FROM t") } == 1)
            let error = #expect(throws: DatabaseError.self) {
                try queue.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
            }
            #expect(error?.resultCode == .readOnly)
            #expect(try queue.read { db in db.isReadOnly })
        }
    }

    @Test func prepareDatabaseRunsOnOpen() throws {
        var configuration = Configuration()
        configuration.label = "prepared"
        configuration.prepareDatabase { db in
            try db.execute(sql: "CREATE TEMP VIEW answer AS SELECT 42 AS value")
        }
        let queue = try DatabaseQueue(configuration: configuration)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT value FROM answer") } == 42)
        #expect(try queue.read { db in db.description } == "prepared.queue")
        #expect(queue.configuration.label == "prepared")
    }

    @Test func failingPrepareDatabaseFailsTheInitializer() throws {
        struct Refused: Error {}
        var configuration = Configuration()
        configuration.prepareDatabase { _ in throw Refused() }
        #expect(throws: Refused.self) { try DatabaseQueue(configuration: configuration) }
    }

    @Test func defaultTransactionKinds() throws {
        let queue = try DatabaseQueue()
        #expect(try queue.writeWithoutTransaction { db in db.defaultTransactionKind } == .immediate)
    }
}
