import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// Concurrent edits merge per field; the later edit of a field wins, by hybrid logical clock.
@Suite(.timeLimit(.minutes(5))) struct MergeTests {
    /// Two devices with one game; they share one wall clock unless `bTime` gives the second
    /// its own, so "later" in a test means later.
    func twoDevicesWithAGame(cloud: MockCloud, bTime: ManualWallClock? = nil) async throws -> (SyncTestDevice, SyncTestDevice) {
        let time = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, time: time)
        let b = try await SyncTestDevice("b", cloud: cloud, time: bTime ?? time)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 1)")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        return (a, b)
    }

    @Test func editsOfDifferentFieldsBothSurvive() async throws {
        let cloud = MockCloud()
        let (a, b) = try await twoDevicesWithAGame(cloud: cloud)
        try await a.execute("UPDATE games SET title = 'Bridge' WHERE id = 'g1'")
        try await b.execute("UPDATE games SET score = 7 WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()  // the server changed first: merge, then resend
        try await a.engine.syncChanges()
        #expect(try await a.rows() == ["game g1 'Bridge' 7"])
        #expect(try await b.rows() == a.rows())
        #expect(try await a.pending() == 0)
        #expect(try await b.pending() == 0)
    }

    @Test func theLaterEditOfOneFieldWins() async throws {
        let cloud = MockCloud()
        let (a, b) = try await twoDevicesWithAGame(cloud: cloud)
        try await a.execute("UPDATE games SET title = 'first' WHERE id = 'g1'")
        try await b.execute("UPDATE games SET title = 'second' WHERE id = 'g1'")  // later physical time
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        #expect(try await a.rows() == ["game g1 'second' 1"])
        #expect(try await b.rows() == a.rows())
    }

    @Test func anUnsentLocalEditIsNeverDroppedByAnOlderRemoteOne() async throws {
        let cloud = MockCloud()
        let (a, b) = try await twoDevicesWithAGame(cloud: cloud)
        try await a.execute("UPDATE games SET title = 'older' WHERE id = 'g1'")
        try await b.execute("UPDATE games SET title = 'newer' WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.engine.fetchChanges()  // fetched before sending: the local edit is newer
        #expect(try await b.rows() == ["game g1 'newer' 1"])
        try await b.engine.sendChanges()
        try await a.engine.syncChanges()
        #expect(try await a.rows() == ["game g1 'newer' 1"])
    }

    @Test func aDeviceWhoseClockIsHoursBehindWinsWithAnEditMadeAfterItSawTheOther() async throws {
        let cloud = MockCloud()
        let behind = ManualWallClock(1_700_000_000_000 - 3 * 3_600_000)
        let (a, b) = try await twoDevicesWithAGame(cloud: cloud, bTime: behind)
        try await a.execute("UPDATE games SET title = 'from a' WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.engine.fetchChanges()
        try await b.execute("UPDATE games SET title = 'from b, later' WHERE id = 'g1'")
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        #expect(try await a.rows() == ["game g1 'from b, later' 1"])
        #expect(try await b.rows() == a.rows())
    }

    @Test func aLocalEditBeatsARemoteDelete() async throws {
        let cloud = MockCloud()
        let (a, b) = try await twoDevicesWithAGame(cloud: cloud)
        try await a.execute("DELETE FROM games WHERE id = 'g1'")
        try await b.execute("UPDATE games SET score = 9 WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        #expect(try await b.rows() == ["game g1 'Poker' 9"])
        #expect(try await a.rows() == b.rows())
    }

    @Test func aNullableFieldMergesToNull() async throws {
        let cloud = MockCloud()
        let (a, b) = try await twoDevicesWithAGame(cloud: cloud)
        try await a.execute("UPDATE games SET score = NULL WHERE id = 'g1'")
        try await b.execute("UPDATE games SET title = 'Bridge' WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        #expect(try await a.rows() == ["game g1 'Bridge' NULL"])
        #expect(try await b.rows() == a.rows())
    }
}
