import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Testing

@testable import StrataSync

/// `pendingCount()` counts records, not log entries: a record changed several times before a
/// drain, or edited again while a failed send left it pending, is one record waiting.
@Suite(.timeLimit(.minutes(2)))
struct PendingCountTests {
    /// A device whose cloud refuses the next modify request with a transient error.
    static func device(failingNextSend: Bool = false) async throws -> (MockCloud, SyncTestDevice) {
        let cloud = MockCloud()
        let device = try await SyncTestDevice("phone", cloud: cloud, encryption: .disabled)
        try await device.engine.sendChanges()  // the zone
        if failingNextSend { cloud.failNextRequests(1, with: .networkFailure, operations: [.modifyRecords]) }
        return (cloud, device)
    }

    /// Several entries for one record in the log, in one transaction or in several: one record.
    @Test(arguments: [
        "INSERT INTO games (id, title) VALUES ('g', 'a'); UPDATE games SET title = 'b' WHERE id = 'g'",
        "INSERT INTO games (id, title) VALUES ('g', 'a'); UPDATE games SET score = 1 WHERE id = 'g'; UPDATE games SET score = 2 WHERE id = 'g'",
        "INSERT INTO games (id, title) VALUES ('g', 'a'); DELETE FROM games WHERE id = 'g'; INSERT INTO games (id, title) VALUES ('g', 'c')",
    ])
    func entriesOfOneRecordCountOnce(sql: String) async throws {
        let (_, device) = try await Self.device()
        try await device.execute(sql)
        #expect(try await device.pending() == 1)
        // The same statements one transaction each.
        let (_, other) = try await Self.device()
        for statement in sql.split(separator: ";") { try await other.execute(String(statement)) }
        #expect(try await other.pending() == 1)
    }

    /// Records a failed send left pending, edited again (one of them twice), beside a record
    /// only in the log: three records, before and after a drain.
    @Test func aPendingRecordEditedAgainCountsOnce() async throws {
        let (cloud, device) = try await Self.device(failingNextSend: true)
        try await device.execute("INSERT INTO games (id, title) VALUES ('g1', 'a'), ('g2', 'b')")
        await #expect(throws: CloudError.networkFailure) { try await device.engine.sendChanges() }
        #expect(try await device.pending() == 2)
        try await device.execute("UPDATE games SET title = 'c' WHERE id = 'g1'")
        try await device.execute("UPDATE games SET title = 'd' WHERE id = 'g1'")
        try await device.execute("UPDATE games SET score = 5 WHERE id = 'g2'")
        try await device.execute("INSERT INTO games (id, title) VALUES ('g3', 'e')")
        #expect(try await device.pending() == 3)
        try await device.engine.drainChangeLog()
        #expect(try await device.pending() == 3)
        try await device.engine.sendChanges()
        #expect(try await device.pending() == 0)
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 3)
    }

    /// A synced record edited again waits again; an entry of a table the engine does not sync
    /// does not wait at all.
    @Test func aSyncedRecordEditedAgainAndAnUnsyncedTable() async throws {
        let (_, device) = try await Self.device()
        try await device.execute("INSERT INTO games (id, title) VALUES ('g', 'a')")
        try await device.engine.sendChanges()
        #expect(try await device.pending() == 0)
        try await device.execute("UPDATE games SET title = 'b' WHERE id = 'g'; UPDATE games SET title = 'c' WHERE id = 'g'")
        #expect(try await device.pending() == 1)
        // An entry another version of the app logged for a table this one does not sync.
        try await device.database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO main.\(ChangeLog.tableName) (tableName, primaryKey, operation, version, "transaction")
                    SELECT 'retired', 'r1', operation, version, "transaction" FROM main.\(ChangeLog.tableName)
                    ORDER BY sequence DESC LIMIT 1
                    """)
        }
        #expect(try await device.pending() == 1)
        try await device.engine.sendChanges()
        #expect(try await device.pending() == 0)
    }
}
