import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// Local changes to synced tables land in the change log, in the writing transaction.
@Suite(.timeLimit(.minutes(5))) struct ChangeCaptureTests {
    static let schemaSQL = """
        CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL DEFAULT '', titleLength INTEGER GENERATED ALWAYS AS (length(title)) VIRTUAL);
        CREATE TABLE players (id TEXT PRIMARY KEY NOT NULL, gameID TEXT REFERENCES games(id) ON DELETE CASCADE, name TEXT, score INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);
        """

    func makeQueue(time: ManualWallClock = ManualWallClock(1_000)) throws -> DatabaseQueue {
        let clock = HybridLogicalClock(node: "deviceA", physicalTime: time.read)
        let capture = ChangeCapture(tables: ["games", "players"], clock: clock)
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: Self.schemaSQL) }
        try queue.writeWithoutTransaction { db in try capture.install(on: db) }
        return queue
    }

    func log(_ queue: DatabaseQueue) throws -> [ChangeLog.Entry] {
        try queue.read { db in try ChangeLog.entries(in: db, node: "deviceA") }
    }

    @Test func insertsUpdatesAndDeletesAreLoggedWithIncreasingVersions() throws {
        let queue = try makeQueue()
        try queue.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker')") }
        try queue.write { db in try db.execute(sql: "UPDATE games SET title = 'Bridge' WHERE id = 'g1'") }
        try queue.write { db in try db.execute(sql: "DELETE FROM games WHERE id = 'g1'") }
        let entries = try log(queue)
        #expect(entries.map(\.operation) == [.save, .save, .delete])
        #expect(entries.map(\.primaryKey) == ["g1", "g1", "g1"])
        #expect(entries.map(\.changedColumns) == [nil, ["title"], nil])
        #expect(entries[0].version < entries[1].version && entries[1].version < entries[2].version)
        #expect(entries.allSatisfy { $0.version.node == "deviceA" })
    }

    @Test func anUpdateLogsOnlyTheColumnsItChangedAndNothingWhenNoneChanged() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')")
            try db.execute(sql: "INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', NULL)")
        }
        try queue.write { db in
            try db.execute(sql: "UPDATE players SET name = 'Blob', score = score WHERE id = 'p1'")  // score unchanged
            try db.execute(sql: "UPDATE players SET name = 'Blob' WHERE id = 'p1'")  // nothing changed
            try db.execute(sql: "UPDATE players SET name = NULL, score = 3 WHERE id = 'p1'")  // NULL is a value
        }
        let updates = try log(queue).filter { $0.tableName == "players" }.dropFirst()
        #expect(updates.map(\.changedColumns) == [["name"], ["name", "score"]])
    }

    @Test func changingAPrimaryKeyLogsADeleteAndASave() throws {
        let queue = try makeQueue()
        try queue.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        try queue.write { db in try db.execute(sql: "UPDATE games SET id = 'g2' WHERE id = 'g1'") }
        let entries = try log(queue).dropFirst()
        #expect(entries.map(\.operation) == [.delete, .save])
        #expect(entries.map(\.primaryKey) == ["g1", "g2"])
    }

    @Test func theEnginesOwnWritesAndUnsyncedTablesAreNotLogged() async throws {
        // The synchronous set-up and the synchronous form of withoutCapture run on a thread of
        // their own: they block, and a cooperative thread must not.
        let queue = try await runOnBackgroundThread { try makeQueue() }
        try await ChangeCapture.withoutCapture {
            try await queue.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('fromCloud')") }
        }
        try await runOnBackgroundThread {
            try ChangeCapture.withoutCapture {
                try queue.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('fromCloud2')") }
            }
        }
        try await queue.write { db in try db.execute(sql: "INSERT INTO notes (text) VALUES ('not synced')") }
        #expect(try await queue.read { db in try ChangeLog.entries(in: db, node: "deviceA").isEmpty })
    }

    @Test func theChangesOfOneTransactionShareItsNumberAndARollbackLogsNothing() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')")
            try db.execute(sql: "INSERT INTO players (id, gameID) VALUES ('p1', 'g1')")
        }
        try queue.writeWithoutTransaction { db in
            try db.inTransaction {
                try db.execute(sql: "INSERT INTO games (id) VALUES ('rolledBack')")
                return .rollback
            }
        }
        try queue.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g2')") }
        let entries = try log(queue)
        #expect(entries.map(\.primaryKey) == ["g1", "p1", "g2"])
        #expect(entries[0].transaction == entries[1].transaction)
        #expect(entries[2].transaction != entries[1].transaction)
    }

    @Test func generatedColumnsAreNotSynced() throws {
        let queue = try makeQueue()
        let schema = try queue.read { db in try SyncSchema.read(tables: ["games"], in: db) }
        #expect(schema.tables.first?.columns.map(\.name) == ["id", "title"])
        #expect(schema.tables.first?.generatedColumns == ["titleLength"])
    }

    @Test func theLogNeverNumbersAnEntryAtOrBelowWhatWasDrained() throws {
        let queue = try makeQueue()
        try queue.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1'), ('g2')") }
        let drained = try log(queue).last?.sequence ?? 0
        try queue.write { db in try ChangeLog.removeEntries(before: drained, in: db) }
        #expect(try log(queue).map(\.sequence) == [drained])
        try queue.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g3')") }
        #expect(try log(queue).map(\.primaryKey) == ["g2", "g3"])
        #expect(try log(queue).last.map { $0.sequence > drained } == true)
    }
}
