import Clocks
import StrataSQLite
@testable import StrataSync
import StrataTestSupport
import Testing

/// A running engine sends after local commits and fetches on hints and polls, on its own
/// schedule's clock; stopped, it does nothing.
@Suite struct ScheduleTests {
    func device(_ id: String, cloud: MockCloud, clock: TestClock<Duration>) throws -> (DatabaseQueue, SyncEngine) {
        let database = try DatabaseQueue()
        try database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let schedule = SyncSchedule(clock: clock, sendDelay: .seconds(1), pollInterval: .seconds(10))
        let engine = try SyncEngine(
            for: database, tableNames: ["games", "players"], container: cloud.container(user: "alice"),
            configuration: SyncEngineConfiguration(deviceID: id, schedule: schedule), startImmediately: false)
        return (database, engine)
    }

    @Test func aCommitIsSentAfterTheSendDelayAndNotWhileStopped() async throws {
        let cloud = MockCloud()
        let clock = TestClock()
        let (database, engine) = try device("a", cloud: cloud, clock: clock)
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        await clock.advance(by: .seconds(5))
        #expect(cloud.records(in: zone).isEmpty)  // not started: nothing automatic

        engine.start()
        #expect(engine.status.isRunning)
        // The schedule's task may not be asleep on the clock yet when the test first advances
        // it, so keep advancing (bounded) until the send shows.
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while cloud.records(in: zone).isEmpty && ContinuousClock.now < deadline {
            await clock.advance(by: .seconds(1))
            await Task.yield()
        }
        #expect(cloud.records(in: zone).count == 1)
        engine.stop()
        #expect(!engine.status.isRunning)
    }

    @Test func anotherDevicesChangeArrivesThroughAHint() async throws {
        let cloud = MockCloud()
        let clock = TestClock()
        let (_, a) = try device("a", cloud: cloud, clock: clock)
        let (database, b) = try device("b", cloud: cloud, clock: clock)
        b.start()
        defer { b.stop() }
        try await a.database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker')") }
        try await a.sendChanges()
        try await waitUntil {
            (try? database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM games") }) == 1
        }
    }
}
