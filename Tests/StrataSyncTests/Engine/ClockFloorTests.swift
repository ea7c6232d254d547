import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// The clock floor the engine keeps in the user's file (`CaptureClockFloor`) covers what the
/// engine received or stamped itself, so an edit made by another process afterwards orders
/// after it; it is not raised for the change log's own versions, which the log covers. A
/// send of local edits then writes the user's file only in its clean-up, after its request:
/// the drain's transaction used to rewrite the floor, one fsync of the user's file more on
/// the push path (issue #27).
@Suite(.timeLimit(.minutes(3)))
struct ClockFloorTests {
    /// The edits a send carries.
    enum Shape: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case insert, updateAfterSentInsert, deleteAfterSentInsert, toolWrite, longLog
        var testDescription: String { rawValue }
    }

    @Test(arguments: Shape.allCases)
    func aSendOfLocalEditsLeavesTheUserFileAloneUntilItsRequestWent(_ shape: Shape) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("a.sqlite")
        let cloud = MockCloud()
        let watcher = Mutex<DatabaseQueue?>(nil)
        // The user file's `data_version` as another connection sees it when each request goes:
        // it moves only when a connection other than the watcher committed a change to it.
        let seenAtRequests = Mutex<[Int]>([])
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            if let watching = watcher.withLock({ $0 }) {
                let version = try await watching.read { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? -1 }
                seenAtRequests.withLock { $0.append(version) }
            }
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        let a = try await SyncTestDevice("a", container: container, database: DatabaseQueue(path: path))
        let tool = try otherConnection(to: path)
        switch shape {
        case .insert:
            try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'first')")
        case .updateAfterSentInsert:
            try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'first')")
            try await a.engine.sendChanges()
            try await a.execute("UPDATE games SET title = 'second', score = 3 WHERE id = 'g1'")
        case .deleteAfterSentInsert:
            try await a.execute(
                "INSERT INTO games (id, title) VALUES ('g1', 'first'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')")
            try await a.engine.sendChanges()
            try await a.execute("DELETE FROM players; DELETE FROM games")
        case .toolWrite:
            // Another process's versions come from its own wall clock, years ahead of the
            // engine's manual one: the engine's clock jumps to them as it drains.
            try await tool.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'from a tool')") }
        case .longLog:
            // Longer than one stretch: the send drains as it goes (`DrainWhileSending`).
            let rows = DrainWhileSending.stretch(batchSize: 400) * 2 + 1
            try await a.database.write { db in
                for index in 0..<rows { try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 't')", arguments: ["g\(index)"]) }
            }
        }
        let floorBefore = try await Self.floor(in: tool)
        let observer = try otherConnection(to: path, captureFunctions: false)
        let before = try await observer.read { db in try Int.fetchOne(db, sql: "PRAGMA data_version") ?? -1 }
        watcher.withLock { $0 = observer }
        try await a.engine.sendChanges()
        let seen = seenAtRequests.withLock { $0 }
        #expect(seen.first == before, "the first request went after a write of the user's file: \(seen) from \(before)")
        #expect(try await Self.floor(in: tool) == floorBefore)
        #expect(try await a.pending() == 0)
        // Nothing of what it sent was lost on the way.
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await b.engine.fetchChanges()
        #expect(try await b.rows() == a.rows())
    }

    /// A conflict's answer brings a newer version of another device's edit (its wall clock an
    /// hour ahead); an edit a tool makes on this device afterwards orders after it, though
    /// the log's last entry is older: the answer raised the floor.
    @Test func anEditElsewhereAfterAConflictAnswerBroughtANewerVersionOrdersAfterIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cloud = MockCloud()
        let now = Int64(Date().timeIntervalSince1970 * 1_000)
        let path = directory.path("a.sqlite")
        let a = try await SyncTestDevice("a", cloud: cloud, time: nil, database: DatabaseQueue(path: path))
        let b = try await SyncTestDevice("b", cloud: cloud, time: ManualWallClock(now + 3_600_000))
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'first', 1)")
        try await a.sync(to: b)
        try await b.execute("UPDATE games SET title = 'from b' WHERE id = 'g1'")
        try await b.engine.sendChanges()
        // a has not fetched b's edit: its send is refused, and the answer carries b's copy.
        try await a.execute("UPDATE games SET score = 2 WHERE id = 'g1'")
        try await a.engine.sendChanges()
        #expect(try await a.rows() == ["game g1 'from b' 2"])
        let tool = try otherConnection(to: path)
        try await tool.write { db in try db.execute(sql: "UPDATE games SET title = 'corrected' WHERE id = 'g1'") }
        // Later than b's edit, which the send received (the sends that follow would carry the
        // value anyway, under b's version: only the logged version shows the order).
        let logged = try await a.database.read { db in try ChangeLog.entries(in: db, node: "a") }
        #expect(try #require(logged.last).version.milliseconds >= now + 3_600_000)
        try await a.sync(to: b)
        try await b.sync(to: a)
        #expect(try await b.rows() == ["game g1 'corrected' 2"])
        #expect(try await a.rows() == ["game g1 'corrected' 2"])
    }

    /// What the floor must cover: versions the clock issued itself or received, not those of
    /// the log it observed; after a restart, everything up to the restored reading.
    @Test func theClockCountsWhatItIssuedAndReceivedButNotTheLogsVersions() {
        let time = ManualWallClock(10_000)
        let clock = HybridLogicalClock(node: "a", physicalTime: time.read)
        #expect(clock.issuedOrReceived == Int64.min)
        _ = clock.nextPackedTime()
        clock.observeLogged(HybridTimestamp(milliseconds: 50_000, counter: 2, node: "log"))
        #expect(clock.issuedOrReceived == Int64.min)
        #expect(clock.lastTimestamp.milliseconds == 50_000)
        let stamped = clock.next()
        #expect(clock.issuedOrReceived == stamped.packedTime)
        let remote = HybridTimestamp(milliseconds: 90_000, counter: 7, node: "b")
        clock.observe(remote)
        #expect(clock.issuedOrReceived == remote.packedTime)
        // An older remote version lowers nothing.
        clock.observe(HybridTimestamp(milliseconds: 1, counter: 0, node: "c"))
        #expect(clock.issuedOrReceived == remote.packedTime)
        let restarted = HybridLogicalClock(node: "a", physicalTime: time.read, restoring: clock.lastTimestamp)
        #expect(restarted.issuedOrReceived == clock.lastTimestamp.packedTime)
    }

    static func floor(in connection: DatabaseQueue) async throws -> Int64? {
        try await connection.read { db in try Int64.fetchOne(db, sql: "SELECT packedTime FROM \(CaptureClockFloor.tableName)") }
    }
}
