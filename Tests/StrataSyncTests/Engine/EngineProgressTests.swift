import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// The engine's progress, per zone, as its status reports it while a send or fetch runs
/// (issue #27): every batch and page moves it, and it clears when the work ends, however it
/// ends.
@Suite(.timeLimit(.minutes(1))) struct EngineProgressTests {
    let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// Numbers of one zone, for comparing sequences of statuses.
    struct Numbers: Equatable, CustomStringConvertible {
        var done: Int
        var total: Int
        var description: String { "\(done)/\(total)" }
    }

    /// Every status the engine went through while `operation` ran, the one before included,
    /// and the error `operation` threw. Nothing waits: once the operation returned, every
    /// status it caused is already in the stream.
    func statuses(
        of engine: SyncEngine, during operation: () async throws -> Void
    ) async -> (statuses: [SyncEngineStatus], error: (any Error)?) {
        var updates = engine.statusUpdates().makeAsyncIterator()
        var statuses: [SyncEngineStatus] = []
        if let first = await updates.next() { statuses.append(first) }
        var failure: (any Error)?
        do { try await operation() } catch { failure = error }
        let last = engine.status.revision
        while let status = await updates.next() {
            statuses.append(status)
            if status.revision >= last { break }
        }
        return (statuses, failure)
    }

    /// The zone's sending numbers through `statuses`, repeats merged; nil while it has none.
    func sending(_ statuses: [SyncEngineStatus]) -> [Numbers?] {
        merged(statuses.map { status in status.progress.zones[zone].map { Numbers(done: $0.sent, total: $0.toSend) } })
    }

    func fetching(_ statuses: [SyncEngineStatus]) -> [Numbers?] {
        merged(statuses.map { status in status.progress.zones[zone].map { Numbers(done: $0.fetched, total: $0.toFetch) } })
    }

    func merged(_ values: [Numbers?]) -> [Numbers?] {
        values.reduce(into: []) { result, value in
            if result.isEmpty || result[result.count - 1] != value { result.append(value) }
        }
    }

    static func n(_ done: Int, _ total: Int) -> Numbers? { Numbers(done: done, total: total) }

    /// `records` records in one transaction: the game (from 0) and players, numbered from `start`.
    func insert(records: Int, into device: SyncTestDevice, from start: Int = 0) async throws {
        try await device.database.write { db in
            try db.execute(sql: "INSERT OR IGNORE INTO games (id, title) VALUES ('g', 'Poker')")
            let first = start == 0 ? 1 : start
            for index in first..<(start + records) {
                try db.execute(
                    sql: "INSERT INTO players (id, gameID, name) VALUES (?, 'g', ?)", arguments: ["p\(index)", "Player \(index)"])
            }
        }
    }

    @Test func aSendInBatchesCountsEachBatchAgainstWhatWasPending() async throws {
        let cloud = MockCloud()
        let device = try await SyncTestDevice("a", cloud: cloud, batchSize: 10)
        try await insert(records: 25, into: device)
        let (statuses, error) = await statuses(of: device.engine) { try await device.engine.sendChanges() }
        #expect(error == nil)
        #expect(sending(statuses) == [nil, Self.n(0, 25), Self.n(10, 25), Self.n(20, 25), Self.n(25, 25), nil])
        #expect(statuses.contains { $0.isSendingChanges && $0.progress.fractionSent == 0.4 })
        #expect(device.engine.status.progress.isEmpty)
        // Revisions count every change, one at a time.
        #expect(zip(statuses, statuses.dropFirst()).allSatisfy { $1.revision == $0.revision + 1 })
    }

    @Test func aFirstFetchInPagesCountsAgainstTheCloudsEstimate() async throws {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("a", cloud: cloud)
        try await insert(records: 25, into: sender)
        try await sender.engine.sendChanges()
        let receiver = try await SyncTestDevice("b", cloud: cloud, fetchPageSize: 10)
        let (statuses, error) = await statuses(of: receiver.engine) { try await receiver.engine.fetchChanges() }
        #expect(error == nil)
        #expect(fetching(statuses) == [nil, Self.n(10, 25), Self.n(20, 25), Self.n(25, 25), nil])
        #expect(try await receiver.rows().count == 25)
    }

    @Test func aZoneFetchedFromScratchAfterAnExpiredTokenStartsItsCountOver() async throws {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("a", cloud: cloud)
        try await insert(records: 25, into: sender)
        try await sender.engine.sendChanges()
        // One page each time: a zone fetched from scratch in several pages after a purge never
        // ends (each page's token is behind the horizon again), on MockCloud and the store.
        let receiver = try await SyncTestDevice("b", cloud: cloud, fetchPageSize: 40)
        try await receiver.engine.fetchChanges()
        try await insert(records: 5, into: sender, from: 25)
        try await sender.engine.sendChanges()
        cloud.purgeTombstones(in: zone)
        let (statuses, error) = await statuses(of: receiver.engine) { try await receiver.engine.fetchChanges() }
        #expect(error == nil)
        // The expired token's request applied nothing: the whole zone comes again, counted from
        // zero (30 records, not 25 + 30).
        #expect(fetching(statuses) == [nil, Self.n(30, 30), nil])
    }

    @Test func aSendThatFailsMidwayClearsItsProgressAndTheNextCountsWhatIsLeft() async throws {
        let cloud = MockCloud()
        let requests = SharedCounter()
        // The second batch (by key: p18 … p4, after g and p1 … p17) fails; the third (p5 … p9)
        // travels beside it, as none of its records is a parent or child of the second's, and
        // its answer is recorded before the send ends with the failure.
        let failures = SharedCounter()
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            requests.increment()
            if failures.count == 0, saving.contains(where: { $0.id.name == "p2:players" }) {
                failures.increment()
                throw CloudError.networkFailure
            }
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        let device = try await SyncTestDevice("a", container: container, batchSize: 10)
        try await insert(records: 25, into: device)
        let (failed, error) = await statuses(of: device.engine) { try await device.engine.sendChanges() }
        #expect(error as? CloudError == .networkFailure)
        #expect(sending(failed) == [nil, Self.n(0, 25), Self.n(10, 25), Self.n(15, 25), nil])
        #expect(device.engine.status.lastError != nil)
        #expect(requests.count == 3)
        #expect(try await device.pending() == 10)
        let (resumed, _) = await statuses(of: device.engine) { try await device.engine.sendChanges() }
        #expect(sending(resumed) == [nil, Self.n(0, 10), Self.n(10, 10), nil])
    }

    @Test func aCancelledSendClearsItsProgress() async throws {
        let cloud = MockCloud()
        let requests = SharedCounter()
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            requests.increment()
            if saving.contains(where: { $0.id.name == "p2:players" }) { throw CancellationError() }
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        let device = try await SyncTestDevice("a", container: container, batchSize: 10)
        try await insert(records: 25, into: device)
        let (statuses, error) = await statuses(of: device.engine) { try await device.engine.sendChanges() }
        #expect(error is CancellationError)
        // The third batch travelled beside the cancelled second one and was answered.
        #expect(sending(statuses) == [nil, Self.n(0, 25), Self.n(10, 25), Self.n(15, 25), nil])
        #expect(!device.engine.status.isSendingChanges)
    }

    @Test func aFetchThatFailsMidwayClearsItsProgressAndTheNextGoesOnFromItsToken() async throws {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("a", cloud: cloud)
        try await insert(records: 25, into: sender)
        try await sender.engine.sendChanges()
        let pages = SharedCounter()
        var container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        container.fetchZone = { zone, token, limit, next in
            pages.increment()
            if pages.count == 2 { throw CloudError.serviceUnavailable(retryAfter: nil) }
            return try await next.fetchZoneChanges(zone, since: token, limit: limit)
        }
        let receiver = try await SyncTestDevice("b", container: container, fetchPageSize: 10)
        let (failed, error) = await statuses(of: receiver.engine) { try await receiver.engine.fetchChanges() }
        #expect(error != nil)
        #expect(fetching(failed) == [nil, Self.n(10, 25), nil])
        let (resumed, _) = await statuses(of: receiver.engine) { try await receiver.engine.fetchChanges() }
        #expect(fetching(resumed) == [nil, Self.n(10, 15), Self.n(15, 15), nil])
        #expect(try await receiver.rows().count == 25)
    }

    @Test func theStatusStreamStartsWithTheCurrentStatusAndEndsWithItsTask() async throws {
        let device = try await SyncTestDevice("a", cloud: MockCloud())
        let current = device.engine.status.revision
        let reader = Task {
            var seen: [Int] = []
            for await status in device.engine.statusUpdates() { seen.append(status.revision) }
            return seen
        }
        reader.cancel()
        let seen = await reader.value
        // Cancelled before or after it read the first value: never more than that one.
        #expect(seen.allSatisfy { $0 == current })
    }

    @Test func theStatusStreamEndsWhenTheEngineIsReleased() async throws {
        var device: SyncTestDevice? = try await SyncTestDevice("a", cloud: MockCloud())
        let updates = try #require(device).engine.statusUpdates()
        device = nil
        var count = 0
        for await _ in updates { count += 1 }
        #expect(count == 1)
    }
}
