import Clocks
import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// Writes made to a synced file by another connection or another process (a command-line
/// tool, an app extension) are captured and sent like the app's own, crash-safe as they are.
@Suite(.timeLimit(.minutes(5))) struct CrossProcessCaptureTests {
    @Test func insertsEditsAndDeletesFromAnotherConnectionReachAnotherDevice() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, database: DatabaseQueue(path: directory.path("a.sqlite")))
        let b = try await SyncTestDevice("b", cloud: cloud)
        let tool = try otherConnection(to: directory.path("a.sqlite"))
        try await tool.write { db in
            try db.execute(sql: "INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
            try db.execute(sql: "INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ada')")
        }
        try await a.sync(to: b)
        #expect(try await b.rows() == ["game g1 'Chess' 1", "player p1 'g1' 'Ada'"])

        try await tool.write { db in
            try db.execute(sql: "UPDATE games SET title = 'Go' WHERE id = 'g1'")
            try db.execute(sql: "DELETE FROM players WHERE id = 'p1'")
        }
        try await a.sync(to: b)
        #expect(try await b.rows() == ["game g1 'Go' 1"])
        #expect(try await a.pending() == 0)
    }

    @Test func anotherConnectionsEditMergesFieldByFieldWithAConcurrentRemoteEdit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, database: DatabaseQueue(path: directory.path("a.sqlite")))
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
        try await a.sync(to: b)
        // The tool changes only the score; b, later, only the title. Neither may undo the other.
        let tool = try otherConnection(to: directory.path("a.sqlite"))
        try await tool.write { db in try db.execute(sql: "UPDATE games SET score = 7 WHERE id = 'g1'") }
        try await b.execute("UPDATE games SET title = 'Go' WHERE id = 'g1'")
        try await b.sync(to: a)
        try await a.sync(to: b)
        #expect(try await a.rows() == ["game g1 'Go' 7"])
        #expect(try await b.rows() == ["game g1 'Go' 7"])
    }

    @Test func transactionsAreNumberedInCommitOrderAcrossConnections() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let a = try await SyncTestDevice("a", cloud: MockCloud(), database: DatabaseQueue(path: directory.path("a.sqlite")))
        let tool = try otherConnection(to: directory.path("a.sqlite"))
        let second = try otherConnection(to: directory.path("a.sqlite"))
        try await tool.write { db in
            for index in 1...3 { try db.execute(sql: "INSERT INTO games (id) VALUES ('t\(index)')") }
        }
        try await a.execute("INSERT INTO games (id) VALUES ('a1'); INSERT INTO games (id) VALUES ('a2')")
        try await second.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('s1')") }
        try await tool.write { db in try db.execute(sql: "UPDATE games SET title = 'x' WHERE id = 't1'") }
        try await a.execute("DELETE FROM games WHERE id = 'a2'")
        let entries = try await a.database.read { db in try ChangeLog.entries(in: db, node: "a") }
        #expect(entries.map(\.primaryKey) == ["t1", "t2", "t3", "a1", "a2", "s1", "t1", "a2"])
        let first = try #require(entries.first?.transaction)
        #expect(entries.map { $0.transaction - first } == [0, 0, 0, 1, 1, 2, 3, 4])
        // Versions grow in commit order too, whichever clock stamped them.
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.version < $1.version })
    }

    @Test func aChangeMadeElsewhereAfterAnEditArrivedOrdersAfterItEvenWithAClockBehind() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cloud = MockCloud()
        // b's clock is an hour ahead of the real time the other connection reads.
        let now = Int64(Date().timeIntervalSince1970 * 1_000)
        let a = try await SyncTestDevice("a", cloud: cloud, time: nil, database: DatabaseQueue(path: directory.path("a.sqlite")))
        let b = try await SyncTestDevice("b", cloud: cloud, time: ManualWallClock(now + 3_600_000))
        try await b.execute("INSERT INTO games (id, title) VALUES ('g1', 'from b')")
        try await b.sync(to: a)
        #expect(try await a.rows() == ["game g1 'from b' NULL"])
        // Someone reads b's title on a, in a tool, and corrects it: the correction came after.
        let tool = try otherConnection(to: directory.path("a.sqlite"))
        try await tool.write { db in try db.execute(sql: "UPDATE games SET title = 'corrected' WHERE id = 'g1'") }
        let logged = try await a.database.read { db in try ChangeLog.entries(in: db, node: "a") }
        #expect(try #require(logged.last).version.milliseconds >= now + 3_600_000)
        try await a.sync(to: b)
        try await b.sync(to: a)
        #expect(try await b.rows() == ["game g1 'corrected' NULL"])
        #expect(try await a.rows() == ["game g1 'corrected' NULL"])
    }

    @Test func aConnectionWithoutTheCaptureFunctionsCannotWriteSyncedTablesAndChangesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let a = try await SyncTestDevice("a", cloud: MockCloud(), database: DatabaseQueue(path: directory.path("a.sqlite")))
        let plain = try otherConnection(to: directory.path("a.sqlite"), captureFunctions: false)
        await #expect {
            try await plain.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        } throws: { error in
            "\(error)".contains("no such function: strata_sync_")
        }
        // Reads, and writes to tables that do not sync, work.
        try await plain.write { db in try db.execute(sql: "CREATE TABLE scratch (x); INSERT INTO scratch VALUES (1)") }
        #expect(try await plain.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM games") } == 0)
        #expect(try await a.pending() == 0)
    }

    @Test func aMigrationElsewhereMayDropOrAddASyncedColumnAndCaptureFollowsTheNewSchema() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("a.sqlite")
        let a = try await SyncTestDevice("a", cloud: MockCloud(), database: DatabaseQueue(path: path))
        let tool = try otherConnection(to: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("drop score, add notes") { db in
            try db.execute(sql: "ALTER TABLE games DROP COLUMN score")
            try db.execute(sql: "ALTER TABLE games ADD COLUMN notes TEXT")
            // Written by the migration itself: not a user's edit, not logged.
            try db.execute(sql: "INSERT INTO games (id, notes) VALUES ('seeded', 'x')")
        }
        try await migrator.migrate(tool)
        try await tool.write { db in
            try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')")
            try db.execute(sql: "UPDATE games SET notes = 'only notes' WHERE id = 'g1'")
        }
        let entries = try await a.database.read { db in try ChangeLog.entries(in: db, node: "a") }
        #expect(entries.map(\.primaryKey) == ["g1", "g1"])
        #expect(entries.map(\.changedColumns) == [nil, ["notes"]])
        let triggers = try await tool.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'games'")
        }
        #expect(triggers.count == 4)
        #expect(triggers.allSatisfy { !$0.contains("\"score\"") })

        // Without the functions, the triggers stay, and SQLite refuses the drop by their name.
        let plain = try otherConnection(to: path, captureFunctions: false)
        var dropping = DatabaseMigrator()
        dropping.registerMigration("drop notes") { db in try db.execute(sql: "ALTER TABLE games DROP COLUMN notes") }
        await #expect {
            try await dropping.migrate(plain)
        } throws: { error in
            "\(error)".contains("strata_sync_capture_update_games")
        }
    }

    /// A schema change can leave a synced table in a shape sync refuses (here, an integer
    /// key), perhaps because the app's next version stops syncing it. The migration applies,
    /// and writes to every other synced table are still captured; writes to that table are
    /// no longer, and the engine refuses it at start if the app still syncs it.
    @Test func aChangeThatMakesATableUnsyncableNeitherFailsTheMigrationNorOtherWrites() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("a.sqlite")
        let a = try await SyncTestDevice("a", cloud: MockCloud(), database: DatabaseQueue(path: path))
        let rebuildPlayers = """
            CREATE TABLE players_new (id INTEGER PRIMARY KEY, gameID TEXT REFERENCES games(id) ON DELETE CASCADE, name TEXT);
            DROP TABLE players;
            ALTER TABLE players_new RENAME TO players;
            """
        let tool = try otherConnection(to: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("integer player keys") { db in try db.execute(sql: rebuildPlayers) }
        try await migrator.migrate(tool)
        try await tool.write { db in
            try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')")
            try db.execute(sql: "INSERT INTO players (gameID, name) VALUES ('g1', 'Ada')")
        }
        // The app's own writer, whose triggers the tool's migration changed, writes on.
        try await a.execute("INSERT INTO games (id) VALUES ('g2'); INSERT INTO players (gameID, name) VALUES ('g2', 'Bo')")
        let logged = try await a.database.read { db in try ChangeLog.entries(in: db, node: "a") }
        #expect(logged.map { "\($0.tableName) \($0.primaryKey)" } == ["games g1", "games g2"])
        await #expect(throws: SyncSchemaError.self) {
            _ = try await SyncTestDevice("a", cloud: MockCloud(), schema: "", database: DatabaseQueue(path: path))
        }
    }

    @Test func startingTheEngineAgainOnAnUnchangedSchemaChangesNoSchema() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("a.sqlite")
        let cloud = MockCloud()
        _ = try await SyncTestDevice("a", cloud: cloud, database: DatabaseQueue(path: path))
        let version = { (queue: DatabaseQueue) in try await queue.read { db in try Int.fetchOne(db, sql: "PRAGMA schema_version") } }
        let queue = try DatabaseQueue(path: path)
        let before = try await version(queue)
        _ = try await SyncTestDevice("a", cloud: cloud, schema: "", database: queue)
        #expect(try await version(queue) == before)
    }

    /// A real second process: the test's helper executable in its `--tool` mode.
    @Test func writesOfAnotherProcessAreSent() async throws {
        let writer = try #require(CrashSafetyTests.writerURL, "strata-sync-crash-writer is built by `swift build --build-tests`")
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("a.sqlite")
        let cloud = MockCloud()
        let a = try await SyncTestDevice(
            "a", cloud: cloud, schema: "CREATE TABLE items (id TEXT PRIMARY KEY NOT NULL, value INTEGER)", tables: ["items"],
            database: DatabaseQueue(path: path))
        let tool = try await runToEnd(writer, ["--tool", path, "20"])
        #expect(tool.status == 0, "\(tool.output)")
        try await a.engine.sendChanges()
        let sent = try await a.cloudRecords(cloud).map { record in
            "\(record.id.name) \(record.fields["value"].map { "\($0)" } ?? "nil")"
        }
        let expected = (1...20).filter { $0 % 5 != 0 }.map { index in
            "tool-\(index):items \(CloudValue.integer(Int64(index % 2 == 0 ? index * 10 : index)))"
        }
        #expect(sent.sorted() == expected.sorted())

        let plain = try await runToEnd(writer, ["--plain", path])
        #expect(plain.status == 3)
        #expect(plain.output.contains("no such function: strata_sync_"), "a capture function is missing: \(plain.output)")
    }

    /// A running engine hears nothing of another process's commit: its polls send what is
    /// waiting, or the write would wait for the app's next own commit.
    @Test func aRunningEngineSendsAnotherProcesssWriteAtItsNextPoll() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cloud = MockCloud()
        let clock = TestClock()
        let a = try await SyncTestDevice(
            "a", cloud: cloud, time: nil, schedule: SyncSchedule(clock: clock, sendDelay: .seconds(1), pollInterval: .seconds(10)),
            database: DatabaseQueue(path: directory.path("a.sqlite")))
        a.engine.start()
        defer { a.engine.stop() }
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        func advance(until count: Int) async {
            // Generous: under a full parallel suite on two cores, the engine's tasks wait long
            // for a thread; a passing run ends as soon as the record is there.
            let deadline = ContinuousClock.now.advanced(by: .seconds(120))
            while cloud.records(in: zone).count < count && ContinuousClock.now < deadline {
                await clock.advance(by: .seconds(1))
                await Task.yield()
            }
        }
        // The app's own commit first: the check `start()` makes is over once it is sent.
        try await a.execute("INSERT INTO games (id) VALUES ('a1')")
        await advance(until: 1)
        try await waitUntil { !a.engine.status.isSendingChanges }
        let tool = try otherConnection(to: directory.path("a.sqlite"))
        try await tool.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        await advance(until: 2)
        #expect(cloud.records(in: zone).map(\.id.name).sorted() == ["a1:games", "g1:games"])
    }

    /// Killed in the middle of its writes, another process loses no committed row to sync.
    @Test(arguments: [25, 160])
    func everyRowAnotherProcessCommittedIsSentAfterItIsKilled(after count: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("a.sqlite")
        let cloud = MockCloud()
        let a = try await SyncTestDevice(
            "a", cloud: cloud, schema: "CREATE TABLE items (id TEXT PRIMARY KEY NOT NULL, value INTEGER)", tables: ["items"],
            database: DatabaseQueue(path: path))
        let committed = try await CrashSafetyTests().runWriterAndKill(path: path, after: count, arguments: ["--tool-until-killed", path])
        #expect(committed.count >= count)
        try await a.engine.sendChanges()
        let sent = Set(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).map(\.id.name))
        let lost = committed.filter { !sent.contains("\($0):items") }
        #expect(lost.isEmpty, "committed by the other process but never sent: \(lost.prefix(10))")
        #expect(try await a.pending() == 0)
    }
}
