import StrataSQLite
import StrataSyncTestSupport
import Testing

@testable import StrataSync

/// `resynchronize()` uploads and reconciles everything, and never deletes a local row.
@Suite(.timeLimit(.minutes(5))) struct ResyncTests {
    let zone = CloudZoneID(name: "strata.default", owner: "alice")

    @Test func afterTheCloudLostTheZoneEveryLocalRowGoesBackUp() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 1), ('g2', 'Chess', 2)")
        try await a.execute("INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann'), ('p2', NULL, 'Bo')")
        try await a.engine.syncChanges()
        let before = try await a.rows()
        // The cloud loses the zone (a reset, a deletion by hand).
        try await cloud.container(user: "alice").privateDatabase.deleteZones([zone])
        #expect(cloud.records(in: zone).isEmpty)

        try await a.engine.resynchronize()
        #expect(try await a.rows() == before, "no local row deleted")
        #expect(cloud.records(in: zone).count == 4)
        #expect(try await a.pending() == 0)
        let fresh = try await SyncTestDevice("c", cloud: cloud)
        try await fresh.engine.syncChanges()
        #expect(try await fresh.rows() == before)
    }

    @Test func aCloudRestoredFromAnOlderStateMergesFieldByField() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, time: time)
        let b = try await SyncTestDevice("b", cloud: cloud, time: time)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 1), ('g2', 'Chess', 2)")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        // B's newer title reaches the cloud; A's newer score of another game was sent, then
        // lost when the cloud went back to an older state (the record is overwritten below).
        try await a.execute("UPDATE games SET score = 20 WHERE id = 'g2'")
        try await a.engine.sendChanges()
        try await b.execute("UPDATE games SET title = 'Hold''em' WHERE id = 'g1'")
        try await b.engine.sendChanges()
        // The restore: g2 goes back to its first state in the cloud, by a device that never
        // saw the change (its versions are older than A's).
        try await cloud.container(user: "alice").privateDatabase.deleteZones([zone])
        try await b.engine.resynchronize()
        // A row A wrote while capture could not see it: never recorded.
        try await ChangeCapture.withoutCapture {
            try await a.database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g3', 'Go')") }
        }

        try await a.engine.resynchronize()
        try await b.engine.syncChanges()
        let expected = ["game g1 'Hold''em' 1", "game g2 'Chess' 20", "game g3 'Go' NULL"]
        #expect(try await a.rows() == expected)
        #expect(try await b.rows() == expected)
        #expect(try await a.pending() == 0)
    }

    @Test func resyncingTwiceChangesNothingMore() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        try await a.engine.resynchronize()
        let records = cloud.records(in: zone).map(\.id)
        try await a.engine.resynchronize()
        #expect(cloud.records(in: zone).map(\.id) == records)
        #expect(try await a.rows() == ["game g1 'Poker' NULL"])
    }
}
