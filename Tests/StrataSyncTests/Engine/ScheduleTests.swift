import Clocks
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// A running engine sends after local commits and fetches on hints and polls, on its own
/// schedule's clock; stopped, it does nothing; idle, it neither wakes nor writes; released, it
/// is freed; stopped or cancelled, its running send ends (issue #24, item 6).
@Suite(.timeLimit(.minutes(2))) struct ScheduleTests {
    func device(
        _ id: String, cloud: MockCloud, clock: TestClock<Duration>, pollInterval: Duration = .seconds(10),
        container: (any CloudContainer)? = nil
    ) async throws -> (DatabaseQueue, SyncEngine) {
        let device = try await SyncTestDevice(
            id, container: container ?? cloud.container(user: "alice"), time: nil,
            schedule: SyncSchedule(clock: clock, sendDelay: .seconds(1), pollInterval: pollInterval))
        return (device.database, device.engine)
    }

    /// Advances the test clock a second at a time until `condition` holds (bounded): the
    /// schedule's tasks may not be asleep on the clock yet when the test first advances it.
    func advance(_ clock: TestClock<Duration>, until condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: realTimeBound)
        while try await !condition() && ContinuousClock.now < deadline {
            await clock.advance(by: .seconds(1))
            await Task.yield()
        }
    }

    /// Lets the work `start()` begins with (a check for changes logged while stopped, after
    /// the send delay) run, and waits until it is over: a fetch queued in the engine's serial
    /// work behind it returns after it.
    func settle(_ engine: SyncEngine, clock: TestClock<Duration>) async throws {
        await clock.advance(by: .seconds(1))
        try await waitUntil { !engine.status.isFetchingChanges && !engine.status.isSendingChanges }
        try await engine.fetchChanges()
    }

    @Test func aCommitIsSentAfterTheSendDelayAndNotWhileStopped() async throws {
        let cloud = MockCloud()
        let clock = TestClock()
        let (database, engine) = try await device("a", cloud: cloud, clock: clock)
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        await clock.advance(by: .seconds(5))
        #expect(cloud.records(in: zone).isEmpty)  // not started: nothing automatic

        engine.start()
        #expect(engine.status.isRunning)
        try await advance(clock) { !cloud.records(in: zone).isEmpty }
        #expect(cloud.records(in: zone).count == 1)
        engine.stop()
        #expect(!engine.status.isRunning)
    }

    @Test func anotherDevicesChangeArrivesThroughAHint() async throws {
        let cloud = MockCloud()
        let clock = TestClock()
        let (_, a) = try await device("a", cloud: cloud, clock: clock)
        let (database, b) = try await device("b", cloud: cloud, clock: clock)
        b.start()
        defer { b.stop() }
        try await a.database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker')") }
        try await a.sendChanges()
        try await waitUntil {
            try await database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM games") } == 1
        }
    }

    /// With changes sent before (the log keeps its last drained entry), twenty idle seconds:
    /// no request, no commit. Then a commit goes out after the send delay.
    @Test func anIdleEngineNeitherWakesNorWrites() async throws {
        let cloud = MockCloud()
        let clock = TestClock()
        let (database, engine) = try await device("a", cloud: cloud, clock: clock, pollInterval: .seconds(60))
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        try await engine.sendChanges()
        engine.start()
        defer { engine.stop() }
        try await settle(engine, clock: clock)
        let commits = database.changeHub.commitCount
        let modifies = cloud.requestCount(.modifyRecords)
        let fetches = cloud.requestCount(.fetchDatabaseChanges)
        for _ in 0..<20 {
            await clock.advance(by: .seconds(1))
            await Task.yield()
        }
        #expect(database.changeHub.commitCount == commits)
        #expect(cloud.requestCount(.modifyRecords) == modifies)
        #expect(cloud.requestCount(.fetchDatabaseChanges) == fetches)

        try await database.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g2')") }
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        try await advance(clock) { cloud.records(in: zone).count == 2 }
        #expect(cloud.records(in: zone).count == 2)
        #expect(cloud.requestCount(.modifyRecords) == modifies + 1)
    }

    /// A running engine released without `stop()` is freed, and its schedule ends.
    @Test func aReleasedEngineIsFreed() async throws {
        let cloud = MockCloud()
        let clock = TestClock()
        let database: DatabaseQueue
        weak var released: SyncEngine?
        do {
            let (queue, engine) = try await device("a", cloud: cloud, clock: clock)
            database = queue
            engine.start()
            try await settle(engine, clock: clock)
            released = engine
        }
        try await waitUntil { released == nil }
        #expect(released == nil)
        // Its schedule is gone: commits and hints no longer reach any engine.
        let modifies = cloud.requestCount(.modifyRecords)
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        for _ in 0..<5 {
            await clock.advance(by: .seconds(1))
            await Task.yield()
        }
        #expect(cloud.requestCount(.modifyRecords) == modifies)
    }

    /// A cloud whose modify requests block until cancelled, announcing each arrival.
    func blockingContainer(_ cloud: MockCloud) -> (InterceptingContainer, AsyncStream<Void>) {
        let (arrivals, arrived) = AsyncStream.makeStream(of: Void.self)
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { _, _, _ in
            arrived.yield()
            try await Task.sleep(for: .seconds(3_600))
            throw CloudError.networkFailure
        }
        return (container, arrivals)
    }

    /// A send blocked in the cloud, ended by `end` (given the engine and the sending task): it
    /// ends with `CancellationError`, and nothing pending is lost.
    func expectCancelled(
        by end: @escaping (SyncEngine, Task<Void, any Error>) -> Void,
        running operation: @escaping @Sendable (SyncEngine) async throws -> Void
    ) async throws {
        let cloud = MockCloud()
        let (container, arrivals) = blockingContainer(cloud)
        let (database, engine) = try await device("a", cloud: cloud, clock: TestClock(), container: container)
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        let running = Task { try await operation(engine) }
        var arrived = arrivals.makeAsyncIterator()
        _ = await arrived.next()
        end(engine, running)
        let result = await running.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(try await engine.pendingCount() == 1)
    }

    @Test func stopCancelsARunningSend() async throws {
        try await expectCancelled(by: { engine, _ in engine.stop() }, running: { try await $0.sendChanges() })
    }

    @Test func cancellingSyncChangesCancelsItsSend() async throws {
        try await expectCancelled(by: { _, task in task.cancel() }, running: { try await $0.syncChanges() })
    }
}
