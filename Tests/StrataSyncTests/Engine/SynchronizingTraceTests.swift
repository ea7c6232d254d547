import Foundation
import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@Table("notes") struct StampedNote {
    let id: String
    var body = ""
    var stamp = ""
}

@Table("edits") struct EditCount {
    let id: Int
    var n: Int
}

/// Every statement the engine runs is marked `SyncEngine.isSynchronizing`, so a trace (or a
/// trigger) can tell the engine's work from the app's.
@Suite(.timeLimit(.minutes(5))) struct SynchronizingTraceTests {
    /// The statements a connection ran, with whether the engine's mark was on.
    /// Nothing runs on its own here (no schedule), so a statement traced while the test's own
    /// code runs is the app's, and any other is the engine's.
    final class TraceLog: Sendable {
        let entries = Mutex<[(sql: String, synchronizing: Bool, byApp: Bool)]>([])
        let appRunning = Mutex(false)
        func record(_ sql: String) {
            let byApp = appRunning.withLock { $0 }
            entries.withLock { $0.append((sql, SyncEngine.isSynchronizing, byApp)) }
        }
        func app<T>(_ body: () async throws -> T) async rethrows -> T {
            appRunning.withLock { $0 = true }
            defer { appRunning.withLock { $0 = false } }
            return try await body()
        }
        func unmarked() -> [String] { entries.withLock { $0.filter { !$0.synchronizing && !$0.byApp }.map(\.sql) } }
        func appStatementsMarked() -> [String] { entries.withLock { $0.filter { $0.synchronizing && $0.byApp }.map(\.sql) } }
        var count: Int { entries.withLock { $0.count } }
    }

    func tracedDevice(_ name: String, cloud: MockCloud, user: String, log: TraceLog) async throws -> SyncTestDevice {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            db.trace { event in log.record(event.sql) }
        }
        let database = try DatabaseQueue(configuration: configuration)
        try await log.app { try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) } }
        return try await SyncTestDevice(name, cloud: cloud, user: user, schema: "", database: database)
    }

    @Test func everyStatementOfTheEngineIsMarked() async throws {
        let cloud = MockCloud()
        let (aliceLog, bobLog) = (TraceLog(), TraceLog())
        let alice = try await tracedDevice("a", cloud: cloud, user: "alice", log: aliceLog)
        let alice2 = try await SyncTestDevice("a2", cloud: cloud, user: "alice")
        let bob = try await tracedDevice("b", cloud: cloud, user: "bob", log: bobLog)
        alice.engine.start()
        bob.engine.start()
        try await aliceLog.app { try await alice.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess')") }
        try await aliceLog.app { try await alice.execute("INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')") }
        _ = try await alice.engine.pendingCount()
        try await alice.engine.drainChangeLog()
        try await alice.engine.syncChanges()
        // A concurrent edit from another device: the next send merges.
        try await alice2.engine.syncChanges()
        try await alice2.execute("UPDATE games SET title = 'Hold''em' WHERE id = 'g1'")
        try await alice2.engine.sendChanges()
        try await aliceLog.app { try await alice.execute("UPDATE games SET score = 3 WHERE id = 'g1'") }
        try await alice.engine.syncChanges()
        let shared = try await alice.engine.share(record: SharedGame(id: "g1")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        }
        _ = try await bob.engine.acceptShare(url: shared.url)
        try await bobLog.app { try await bob.execute("UPDATE players SET name = 'Bea' WHERE id = 'p1'") }
        try await bob.engine.syncChanges()
        try await alice.engine.fetchChanges()
        try await aliceLog.app { try await alice.execute("DELETE FROM games WHERE id = 'g2'") }
        try await alice.engine.syncChanges()
        try await alice.engine.unshare(record: SharedGame(id: "g1"))
        try await bob.engine.syncChanges()
        _ = try await alice.engine.pendingEnrollments()
        try await alice.engine.deleteLocalData()

        #expect(aliceLog.count > 50)
        #expect(aliceLog.unmarked() == [])
        #expect(bobLog.unmarked() == [])
        #expect(aliceLog.appStatementsMarked() == [])
        #expect(bobLog.appStatementsMarked() == [])
    }

    @Test func aTriggerGuardsOnTheMarkThroughTheQueryBuilder() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        // Counts the app's own title edits, not the ones sync brings in.
        try await b.database.write { db in
            try db.execute(sql: "CREATE TABLE edits (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO edits VALUES (1, 0)")
            try SharedGame.createTemporaryTrigger(
                after: .update,
                forEachRow: { _ in EditCount.find(1).update { $0.n += 1 } },
                when: { _ in !SyncEngine.$isSynchronizingChanges() }
            )
            .execute(db)
        }
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        try await a.execute("UPDATE games SET title = 'Chess' WHERE id = 'g1'")
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(try await b.strings("SELECT title FROM games") == ["Chess"])
        #expect(try await b.strings("SELECT CAST(n AS TEXT) FROM edits") == ["0"])
        try await b.execute("UPDATE games SET title = 'Go' WHERE id = 'g1'")
        #expect(try await b.strings("SELECT CAST(n AS TEXT) FROM edits") == ["1"])
    }

    @Test func aTouchTriggerGuardedOnTheMarkLeavesReceivedRowsAlone() async throws {
        let cloud = MockCloud()
        let schema = "CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, body TEXT NOT NULL DEFAULT '', stamp TEXT NOT NULL DEFAULT '')"
        let a = try await SyncTestDevice("a", cloud: cloud, schema: schema, tables: ["notes"])
        let guarded = try await SyncTestDevice("b", cloud: cloud, schema: schema, tables: ["notes"])
        let unguarded = try await SyncTestDevice("c", cloud: cloud, schema: schema, tables: ["notes"])
        try await guarded.database.write { db in
            try StampedNote.createTemporaryTrigger(
                after: .update(touch: \.stamp, to: #sql("'touched by b'", as: String.self)),
                when: { _ in !SyncEngine.$isSynchronizingChanges() }
            )
            .execute(db)
        }
        try await unguarded.database.write { db in
            try StampedNote.createTemporaryTrigger(after: .update(touch: \.stamp, to: #sql("'touched by c'", as: String.self))).execute(db)
        }
        try await a.execute("INSERT INTO notes (id, body, stamp) VALUES ('n1', 'first', 'a')")
        try await a.engine.sendChanges()
        for device in [guarded, unguarded] { try await device.engine.fetchChanges() }
        try await a.execute("UPDATE notes SET body = 'second', stamp = 'a again' WHERE id = 'n1'")
        try await a.engine.sendChanges()
        for device in [guarded, unguarded] { try await device.engine.fetchChanges() }
        // Guarded: the received edit arrives as sent. Unguarded: restamped locally, which
        // no other device ever sees (the control that shows why the guard matters).
        #expect(try await guarded.strings("SELECT body || ' ' || stamp FROM notes") == ["second a again"])
        #expect(try await unguarded.strings("SELECT body || ' ' || stamp FROM notes") == ["second touched by c"])
        // The app's own edit is still stamped, and syncs.
        try await guarded.execute("UPDATE notes SET body = 'third' WHERE id = 'n1'")
        #expect(try await guarded.strings("SELECT body || ' ' || stamp FROM notes") == ["third touched by b"])
        try await guarded.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await a.strings("SELECT body || ' ' || stamp FROM notes") == ["third touched by b"])
    }
}
