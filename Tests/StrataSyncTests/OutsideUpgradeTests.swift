import Foundation
import StrataQueries
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// Outside tests of the one-time rebuild of a `WITHOUT ROWID` metadata table (Sync.md, "One
/// metadatabase per container").
@Suite(.timeLimit(.minutes(4))) struct OutsideUpgradeTests {
    /// Every column, generated ones included, quoted, one text per row, in key order.
    static let dumpSQL =
        "SELECT "
        + [
            "recordType", "recordPrimaryKey", "recordName", "zoneName", "ownerName", "parentRecordType", "parentRecordPrimaryKey",
            "lastKnownServerRecord", "serverChangeTag", "fieldVersions", "pendingOperation", "pendingRevision",
            "pendingTransaction", "userModificationTime", "isShared", "share", "sharePermission", "isOwnedByCurrentUser",
        ].map { "quote(\($0))" }.joined(separator: " || '|' || ")
        + " FROM strata_sync.metadata ORDER BY recordType, recordPrimaryKey"

    /// Turns the current metadata table into the layout an earlier version created, keeping
    /// every row (run on a connection without the engine's temp triggers).
    static let downgradeSQL = """
        DROP TRIGGER strata_sync.counters_follow_metadata;
        DROP INDEX strata_sync.metadata_pending;
        DROP INDEX strata_sync.metadata_shares;
        DROP INDEX strata_sync.metadata_zone_roots;
        ALTER TABLE strata_sync.metadata RENAME TO metadata_current;
        \(MetadataLayoutTests.earlierMetadataSQL)
        INSERT INTO strata_sync.metadata (\(MetadatabaseTable.metadataStoredColumns))
            SELECT \(MetadatabaseTable.metadataStoredColumns) FROM strata_sync.metadata_current;
        DROP TABLE strata_sync.metadata_current;
        CREATE TRIGGER strata_sync.counters_follow_metadata AFTER DELETE ON metadata BEGIN
            DELETE FROM counters WHERE recordType = OLD.recordType AND recordPrimaryKey = OLD.recordPrimaryKey;
        END;
        """

    static func layout(_ db: Database) throws -> String {
        try String.fetchOne(db, sql: "SELECT sql FROM strata_sync.sqlite_master WHERE type = 'table' AND name = 'metadata'") ?? ""
    }

    static func schemaObjects(_ db: Database) throws -> [String] {
        try String.fetchAll(
            db,
            sql: "SELECT type || ' ' || name || ' ' || tbl_name FROM strata_sync.sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY 1")
    }

    static func configuration(_ id: String) -> SyncEngineConfiguration {
        SyncEngineConfiguration(deviceID: id, schedule: nil, encryption: .disabled)
    }

    static func engine(_ database: any DatabaseWriter, _ container: any CloudContainer, _ id: String) async throws -> SyncEngine {
        let configuration = configuration(id)
        let engine = try await runOnBackgroundThread {
            try SyncEngine(
                for: database, tableNames: SyncTestDevice.tableNames, container: container, configuration: configuration,
                startImmediately: false)
        }
        engine.start()
        return engine
    }

    /// The realistic path: a file-backed pool syncs, is "downgraded" to the earlier layout
    /// while the app is not running, and restarts (new pool, new engine) on the same files.
    @Test(arguments: [false, true])
    func aFileUpgradedOnRestartSendsPendingOnceAndSyncedNever(attachInPrepare: Bool) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.databasePath
        let cloud = MockCloud()
        let sent = SentLedger()
        let container = sent.recording(cloud.container(user: "alice"))

        // Bob shares a game read-only with alice.
        let bob = try await SyncTestDevice("b", cloud: cloud, user: "bob", encryption: .disabled)
        bob.engine.start()
        try await bob.execute("INSERT INTO games (id, title) VALUES ('bob-g', 'Bridge')")
        try await bob.engine.sendChanges()
        let bobsShare = try await bob.engine.share(record: SharedGame(id: "bob-g")) { share in
            share.participants.append(CloudShare.Participant(user: "alice", permission: .readOnly))
        }

        var pool: DatabasePool? = try DatabasePool(path: path)
        try await pool!.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        var engine: SyncEngine? = try await Self.engine(pool!, container, "a")
        let bigTitle = String(repeating: "Ω漢🎲", count: 300)
        try await pool!.write { db in
            for index in 0..<1_000 {
                try db.execute(
                    sql: "INSERT INTO games (id, title, score) VALUES (?, ?, ?)",
                    arguments: ["g\(index)-é🎲:.'\"", index % 7 == 0 ? bigTitle : "t\(index)", index % 3 == 0 ? nil : index])
            }
            for index in 0..<200 {
                try db.execute(
                    sql: "INSERT INTO players (id, gameID, name) VALUES (?, ?, ?)",
                    arguments: ["p\(index)", "g\(index)-é🎲:.'\"", index % 2 == 0 ? nil : "名前\(index)"])
            }
        }
        try await engine!.sendChanges()
        // Alice shares one of hers with bob, and accepts bob's.
        _ = try await engine!.share(record: SharedGame(id: "g1-é🎲:.'\"")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        }
        _ = try await engine!.acceptShare(bobsShare)
        try await engine!.fetchChanges()
        #expect(try await engine!.pendingCount() == 0)
        // Pending changes, drained into the metadata table before the upgrade.
        try await pool!.write { db in
            for index in 1_000..<1_050 {
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 'new')", arguments: ["g\(index)-é🎲:.'\""])
            }
            try db.execute(sql: "UPDATE games SET title = 'changed' WHERE id IN ('g10-é🎲:.''\"', 'g11-é🎲:.''\"', 'g12-é🎲:.''\"')")
            try db.execute(sql: "DELETE FROM games WHERE id IN ('g500-é🎲:.''\"', 'g501-é🎲:.''\"')")
        }
        let pendingBefore = try await engine!.pendingCount()
        #expect(pendingBefore == 55)
        let metadataBefore = try await pool!.write { db in
            try SyncMetadata.all.fetchAll(db).sorted { $0.recordName < $1.recordName }
        }
        engine!.stop()
        engine = nil
        pool!.close()
        pool = nil

        // What an earlier version left: the same rows, WITHOUT ROWID; and counters for two
        // records that will be deleted and one that stays.
        let metadatabasePath = try #require(
            Metadatabase.location(for: .file(path: path), containerIdentifier: cloud.identifier).path)
        let before: [String]
        do {
            let queue = try DatabaseQueue(path: path)
            before = try await queue.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS strata_sync", arguments: [metadatabasePath])
                try db.execute(sql: Self.downgradeSQL)
                try db.execute(
                    sql: """
                        INSERT INTO strata_sync.counters VALUES ('games', 'g500-é🎲:.''"', 'score', '{}'), ('games', 'g501-é🎲:.''"', 'score', '{}'),
                            ('games', 'g2-é🎲:.''"', 'score', '{}')
                        """)
                #expect(try Self.layout(db).uppercased().contains("WITHOUT ROWID"))
                return try String.fetchAll(db, sql: Self.dumpSQL)
            }
            queue.close()
        }
        #expect(before.count == metadataBefore.count)

        // Restart.
        var configuration = Configuration()
        if attachInPrepare { configuration.prepareDatabase { db in try db.attachMetadatabase() } }
        let restarted = try DatabasePool(path: path, configuration: configuration)
        if attachInPrepare {
            // A reader attaches first (read-only: no rebuild there), then the writer.
            let readerSees = try await restarted.read { db in try String.fetchAll(db, sql: Self.dumpSQL) }
            #expect(readerSees == before)
        }
        sent.reset()
        let upgraded = try await Self.engine(restarted, container, "a")
        let (layout, after, objects, rootpage, metadataAfter) = try await restarted.write { db in
            (
                try Self.layout(db), try String.fetchAll(db, sql: Self.dumpSQL), try Self.schemaObjects(db),
                try Int.fetchOne(db, sql: "SELECT rootpage FROM strata_sync.sqlite_master WHERE name = 'metadata'"),
                try SyncMetadata.all.fetchAll(db).sorted { $0.recordName < $1.recordName }
            )
        }
        #expect(!layout.uppercased().contains("WITHOUT ROWID"), "\(layout)")
        #expect(after == before)
        #expect(metadataAfter == metadataBefore)
        #expect(objects.contains("trigger counters_follow_metadata metadata"), "\(objects)")
        for index in ["metadata_pending", "metadata_shares", "metadata_zone_roots"] {
            #expect(objects.contains("index \(index) metadata"), "\(objects)")
        }
        #expect(!objects.contains { $0.contains("metadata_rebuilt") }, "\(objects)")
        #expect(try await upgraded.pendingCount() == 55)

        // Pending records go once; synced records never again.
        try await upgraded.sendChanges()
        let saved = sent.saved()
        let expectedSaves =
            Set((1_000..<1_050).map { "g\($0)-é🎲:.'\":games" }).union(["g10-é🎲:.'\":games", "g11-é🎲:.'\":games", "g12-é🎲:.'\":games"])
        #expect(Set(saved.keys) == expectedSaves)
        #expect(saved.values.allSatisfy { $0 == 1 }, "\(saved.filter { $0.value != 1 })")
        #expect(Set(sent.deleted().keys) == ["g500-é🎲:.'\":games", "g501-é🎲:.'\":games"])
        #expect(try await upgraded.pendingCount() == 0)
        try await upgraded.syncChanges()
        #expect(sent.saved().values.allSatisfy { $0 == 1 })
        let counters = try await restarted.write { db in
            try String.fetchAll(db, sql: "SELECT recordPrimaryKey FROM strata_sync.counters ORDER BY 1")
        }
        #expect(counters == ["g2-é🎲:.'\""], "the counters follow their metadata after the upgrade: \(counters)")

        // Another device gets alice's rows.
        let second = try await SyncTestDevice("a2", cloud: cloud, user: "alice", encryption: .disabled)
        try await second.engine.fetchChanges()
        let mine = "SELECT id || '|' || title || '|' || quote(score) FROM games WHERE id <> 'bob-g' ORDER BY id"
        let ours = try await restarted.write { db in try String.fetchAll(db, sql: mine) }
        #expect(try await second.strings(mine) == ours)
        #expect(ours.count == 1_048)
        // The read-only share still refuses local writes after the upgrade.
        await #expect(throws: DatabaseError.self) {
            try await restarted.write { db in try db.execute(sql: "UPDATE games SET title = 'x' WHERE id = 'bob-g'") }
        }
        upgraded.stop()

        // A second restart: no rebuild, nothing lost, nothing sent.
        restarted.close()
        let again = try DatabasePool(path: path, configuration: configuration)
        sent.reset()
        let third = try await Self.engine(again, container, "a")
        let (rootpageAgain, dumpAgain) = try await again.write { db in
            (
                try Int.fetchOne(db, sql: "SELECT rootpage FROM strata_sync.sqlite_master WHERE name = 'metadata'"),
                try String.fetchAll(db, sql: Self.dumpSQL)
            )
        }
        #expect(rootpageAgain == rootpage)
        #expect(dumpAgain.count == after.count + 50 - 2)
        try await third.syncChanges()
        #expect(sent.saved().isEmpty && sent.deleted().isEmpty)
        third.stop()
        again.close()
    }

    /// An earlier metadatabase with many odd rows, attached in memory.
    static func earlierMetadatabase(rows: Int, on database: DatabaseQueue) async throws {
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ':memory:' AS strata_sync")
            try db.execute(sql: MetadatabaseTable.state.createSQL + MetadataLayoutTests.earlierSchema)
            let bigJSON = "{\"a\":\"" + String(repeating: "x🎲", count: 50_000) + "\"}"
            let keys = ["", " ", "'", "\"", "a:b", "a.b", "é", "e\u{301}", "🎲", "\u{FEFF}", "NULL", "%", "_", "\\", "a\u{0}b"]
            for index in 0..<rows {
                let key = keys[index % keys.count] + "\(index)"
                try db.execute(
                    sql: """
                        INSERT INTO strata_sync.metadata (\(MetadatabaseTable.metadataStoredColumns))
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        index % 5 == 0 ? "players" : "games", key, index % 4 == 0 ? "zone.🎲.x" : "strata.default",
                        index % 6 == 0 ? "bob.smith" : "alice", index % 5 == 0 ? "games" : nil, index % 5 == 0 ? "g\(index)" : nil,
                        index == 3 ? bigJSON : (index % 2 == 0 ? nil : "{\"k\":\"\(index)\"}"), index % 2 == 0 ? "tag\(index)" : nil,
                        index % 9 == 0 ? "{\"title\":\"1700000000000.0@ü\"}" : "{}",
                        index % 3 == 0 ? (index % 2 == 0 ? "save" : "delete") : nil,
                        index, index % 3 == 0 ? index / 10 : nil, index % 8 == 0 ? nil : "1700000000000.0@a", index % 11 == 0 ? 1 : 0,
                        index % 11 == 0 ? "{\"s\":\(index)}" : nil, index % 6 == 0 ? ["none", "readOnly", "readWrite"][index % 3] : nil,
                    ])
                if index % 10 == 0 {
                    try db.execute(
                        sql: "INSERT INTO strata_sync.counters VALUES (?, ?, 'score', '{}')",
                        arguments: [
                            index % 5 == 0 ? "players" : "games", key,
                        ])
                }
            }
        }
    }

    @Test func thousandsOfOddRowsSurviveTheRebuildExactly() async throws {
        let database = try DatabaseQueue()
        try await Self.earlierMetadatabase(rows: 6_000, on: database)
        let before = try await database.read { db in
            (try String.fetchAll(db, sql: Self.dumpSQL), try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.counters"))
        }
        // The app's own attach, then the engine's.
        try await database.writeWithoutTransaction { db in try db.attachMetadatabase(containerIdentifier: MockCloud().identifier) }
        let afterAttach = try await database.read { db in (try Self.layout(db), try String.fetchAll(db, sql: Self.dumpSQL)) }
        #expect(!afterAttach.0.uppercased().contains("WITHOUT ROWID"))
        #expect(afterAttach.1 == before.0)
        let engine = try await Self.engine(database, MockCloud().container(user: "alice"), "a")
        _ = engine
        let after = try await database.read { db in
            (
                try String.fetchAll(db, sql: Self.dumpSQL), try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.counters"),
                try Self.schemaObjects(db),
                try String.fetchAll(
                    db, sql: "SELECT recordPrimaryKey FROM strata_sync.metadata WHERE recordPrimaryKey = ?", arguments: ["a\u{0}b14"])
            )
        }
        #expect(after.0 == before.0)
        #expect(after.0.count == 6_000)
        #expect(after.1 == before.1)
        #expect(after.3.count == 1)
        #expect(after.2.contains("trigger counters_follow_metadata metadata"), "\(after.2)")
        // Deleting metadata rows deletes their counters, and only theirs.
        let remaining = try await database.write { db in
            try db.execute(sql: "DELETE FROM strata_sync.metadata WHERE recordPrimaryKey IN ('0', 'NULL10', 'a.b20')")
            return try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.counters")
        }
        #expect(remaining == (before.1 ?? 0) - 3)
    }

    /// A rebuild that fails must leave the old table as it was (here, a temporary view over
    /// the metadata table makes the rename fail, if anything does).
    @Test func aRebuildThatFailsLeavesTheOldTable() async throws {
        let database = try DatabaseQueue()
        try await Self.earlierMetadatabase(rows: 300, on: database)
        let (before, objectsBefore) = try await database.read { db in
            (try String.fetchAll(db, sql: Self.dumpSQL), try Self.schemaObjects(db))
        }
        let outcome = try await database.writeWithoutTransaction { db -> String? in
            try db.execute(
                sql: "CREATE TEMP VIEW outside_pending AS SELECT recordName FROM strata_sync.metadata WHERE pendingOperation IS NOT NULL")
            do {
                try db.attachMetadatabase()
                return nil
            } catch {
                return "\(error)"
            }
        }
        let (layout, after, objects) = try await database.read { db in
            (try Self.layout(db), try String.fetchAll(db, sql: Self.dumpSQL), try Self.schemaObjects(db))
        }
        #expect(after == before, "rows after \(outcome ?? "success")")
        if outcome != nil {
            #expect(layout.uppercased().contains("WITHOUT ROWID"))
            #expect(objects == objectsBefore, "\(outcome ?? "")")
        } else {
            #expect(!layout.uppercased().contains("WITHOUT ROWID"))
            #expect(objects.contains("trigger counters_follow_metadata metadata"), "\(objects)")
        }
        // Once the view is gone, the rebuild goes through and keeps every row.
        try await database.writeWithoutTransaction { db in
            try db.execute(sql: "DROP VIEW IF EXISTS temp.outside_pending")
            try db.attachMetadatabase()
        }
        let (finalLayout, finalRows) = try await database.read { db in (try Self.layout(db), try String.fetchAll(db, sql: Self.dumpSQL)) }
        #expect(!finalLayout.uppercased().contains("WITHOUT ROWID"))
        #expect(finalRows == before)
    }

    /// A rebuild that fails at its first step (an object already named as its temporary
    /// table) leaves the old table and throws; nothing half done.
    @Test func aRebuildBlockedAtItsStartLeavesTheOldTable() async throws {
        let database = try DatabaseQueue()
        try await Self.earlierMetadatabase(rows: 100, on: database)
        let before = try await database.write { db in
            try db.execute(sql: "CREATE TABLE strata_sync.metadata_rebuilt (x)")
            return try String.fetchAll(db, sql: Self.dumpSQL)
        }
        var failure: String?
        do {
            _ = try await Self.engine(database, MockCloud().container(user: "alice"), "a")
        } catch {
            failure = "\(error)"
        }
        let (layout, after) = try await database.read { db in (try Self.layout(db), try String.fetchAll(db, sql: Self.dumpSQL)) }
        #expect(after == before, "\(failure ?? "started")")
        if failure != nil { #expect(layout.uppercased().contains("WITHOUT ROWID")) }
    }
}

/// How many times each record name was saved and deleted through a container.
final class SentLedger: Sendable {
    private let state = Mutex<(saved: [String: Int], deleted: [String: Int])>(([:], [:]))
    func record(saving: [CloudRecord], deleting: [CloudRecordID]) {
        state.withLock { state in
            for record in saving { state.saved[record.id.name, default: 0] += 1 }
            for id in deleting { state.deleted[id.name, default: 0] += 1 }
        }
    }
    func saved() -> [String: Int] { state.withLock { $0.saved } }
    func deleted() -> [String: Int] { state.withLock { $0.deleted } }
    func reset() { state.withLock { $0 = ([:], [:]) } }
}

extension SentLedger {
    /// A container over `base` whose private database reports here what it sends (after the
    /// cloud accepted it).
    func recording(_ base: any CloudContainer) -> InterceptingContainer {
        InterceptingContainer(base: base) { saving, deleting, next in
            let result = try await next.modifyRecords(saving: saving, deleting: deleting)
            self.record(saving: saving, deleting: deleting)
            return result
        }
    }
}
