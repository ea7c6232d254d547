import Foundation
import StrataSQLite
import StrataSyncTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// An outside review of planned page starts in the engine (issue #27): the engine asks its
/// two pages ahead from starts the cloud planned, and the docs promise that a change saved
/// after the planning may be repeated but never left out, and that a page from a planned start
/// holding nothing new sends the fetch back to the chain without error. These tests change the
/// zone between the engine's page requests in shapes the in-tree tests do not (part of a page
/// saved again, deletes, re-creates, random writes from another device before every request),
/// cancel a fetch, restart a device, and compare the fetching device with the writing one.
@Suite(.timeLimit(.minutes(5)))
struct OutsidePlannedPagesEngineTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// Sees the app zone's page requests, in the order they are asked, and runs `before` ahead
    /// of each (with the request's index, its token, its limit and the database behind).
    final class Watch: PrivateDatabaseWatch {
        struct State {
            var asked: [CloudChangeToken?] = []
            var planned: Set<CloudChangeToken> = []
            var askedFromPlanned = 0
            var firstToken: CloudChangeToken?
            var answered: [(since: CloudChangeToken?, token: CloudChangeToken, fromPlanned: Bool)] = []
        }
        typealias Before =
            @Sendable (_ index: Int, _ since: CloudChangeToken?, _ firstToken: CloudChangeToken?, _ limit: Int, _ next: any CloudDatabase)
            async throws -> Void
        let state = Mutex(State())
        let before: Before

        init(before: @escaping Before = { _, _, _, _, _ in }) { self.before = before }

        func databaseChanges(
            since token: CloudChangeToken?, firstPages: [CloudZonePageRequest], _ next: any CloudDatabase
        ) async throws -> CloudDatabaseChanges {
            let changes = try await next.fetchDatabaseChanges(since: token, firstPages: firstPages)
            if let page = changes.firstPages[OutsidePlannedPagesEngineTests.zone] {
                state.withLock { state in
                    state.asked.append(firstPages.first?.since)
                    state.firstToken = page.token
                    state.planned.formUnion(page.followingTokens)
                    state.answered.append((firstPages.first?.since, page.token, false))
                }
            }
            return changes
        }

        func arrivingZoneChanges(
            _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int, _ next: any CloudDatabase
        ) async throws -> ArrivingZoneChanges {
            let (index, first, fromPlanned) = state.withLock { state -> (Int, CloudChangeToken?, Bool) in
                state.asked.append(token)
                // The engine asks a page from a planned start without planning, except the
                // last of a run; a token alone cannot tell (a run's next page from a token
                // often starts where the run's plan would have put it).
                let fromPlanned = plannedPages == 0
                if fromPlanned { state.askedFromPlanned += 1 }
                return (state.asked.count - 1, state.firstToken, fromPlanned)
            }
            // In a task of its own: a page request the engine cancels (pages ahead discarded)
            // must not cancel another device's write half-way (its send would stop, and the
            // rows compared at the end would hold a change the cloud never got).
            let before = self.before
            try await Task { try await before(index, token, first, limit, next) }.value
            let page = try await next.fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: plannedPages)
            state.withLock { state in
                state.planned.formUnion(page.followingTokens)
                state.answered.append((token, page.token, fromPlanned))
            }
            return page
        }

        var summary: String {
            state.withLock { state in
                state.answered.map { "\($0.since?.value ?? "nil")→\($0.token.value)\($0.fromPlanned ? "*" : "")" }.joined(separator: " ")
            }
        }
    }

    /// A phone that saved `count` games (g000…) in one transaction.
    static func phone(_ cloud: MockCloud, count: Int, encryption: SyncEncryption) async throws -> SyncTestDevice {
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        try await phone.database.write { db in
            for game in 0..<count {
                try db.execute(
                    sql: "INSERT INTO games (id, title, score) VALUES (?, 'G', ?)", arguments: [String(format: "g%03d", game), game])
            }
        }
        try await phone.engine.sendChanges()
        return phone
    }

    static func laptop(_ cloud: MockCloud, _ watch: Watch, pageSize: Int, encryption: SyncEncryption) async throws -> SyncTestDevice {
        try await SyncTestDevice(
            "laptop", container: WatchedContainer(base: cloud.container(user: "alice"), watch: watch), fetchPageSize: pageSize,
            encryption: encryption)
    }

    static let encryptions: [(String, SyncEncryption)] = [("endToEnd", .endToEnd), ("disabled", .disabled)]

    /// DEFECT (found by this review): part of the second page — `resaved` of its records, not
    /// all — is saved again after the first page planned the third page's start and before the
    /// second page is read. The second page then reads past that start (its records moved to
    /// the end), so it plans the fourth page's start `resaved` changes further on than the
    /// third page, asked from the first page's plan, ends. The records between the third page's
    /// end and the fourth page's start are never fetched: the page from the planned start does
    /// not end with the second page's token, so the engine does not go back to the chain, and
    /// the token it saves covers them. The docs promise a page from a planned start "never
    /// skips" a change (Sync.md, Cloud.md). A second fetch does not repair it.
    /// With `resaved == pageSize` (the in-tree test's shape) the fetch falls back and holds.
    @Test(arguments: [(40, 5, 1), (40, 5, 2), (40, 5, 4), (40, 5, 5), (30, 3, 1), (12, 2, 1), (100, 10, 3)])
    func aPartlyResavedSecondPageLeavesRecordsOut(count: Int, pageSize: Int, resaved: Int) async throws {
        let done = Mutex(false)
        let watch = Watch { _, since, first, limit, next in
            guard let since, since == first, !done.withLock({ $0 }) else { return }
            done.withLock { $0 = true }
            let second = try await next.fetchZoneChanges(Self.zone, since: since, limit: limit)
            _ = try await next.modifyRecords(saving: Array(second.changed.prefix(resaved)), deleting: [])
        }
        let cloud = MockCloud()
        let phone = try await Self.phone(cloud, count: count, encryption: .endToEnd)
        let laptop = try await Self.laptop(cloud, watch, pageSize: pageSize, encryption: .endToEnd)
        try await laptop.engine.fetchChanges()
        #expect(done.withLock { $0 })
        let missing = Set(try await phone.rows()).subtracting(try await laptop.rows()).sorted()
        #expect(
            missing.isEmpty, "\(count) games, pages of \(pageSize), \(resaved) saved again: missing \(missing.prefix(6)); \(watch.summary)")
        // Nothing changes any more: a second fetch must bring whatever the first left out.
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()), "after a second fetch")
    }

    /// DEFECT (the same as above): the same shape with deletes instead of saves — part of the
    /// second page deleted by another device before the second page is read (its tombstones
    /// move to the end); live records after the third page are never fetched.
    @Test(arguments: [(40, 5, 1), (40, 5, 3), (21, 4, 2)])
    func aPartlyDeletedSecondPageLeavesRecordsOut(count: Int, pageSize: Int, deleted: Int) async throws {
        let done = Mutex(false)
        let cloud = MockCloud()
        let phone = try await Self.phone(cloud, count: count, encryption: .endToEnd)
        let watch = Watch { _, since, first, limit, next in
            guard let since, since == first, !done.withLock({ $0 }) else { return }
            done.withLock { $0 = true }
            // The second page's first games (records are named opaquely with encryption; the
            // phone sent its games in order). The phone deletes them, so it stays the truth.
            let ids = (limit..<limit + deleted).map { String(format: "'g%03d'", $0) }
            try await phone.execute("DELETE FROM games WHERE id IN (\(ids.joined(separator: ",")))")
            try await phone.engine.sendChanges()
        }
        let laptop = try await Self.laptop(cloud, watch, pageSize: pageSize, encryption: .endToEnd)
        try await laptop.engine.fetchChanges()
        #expect(done.withLock { $0 })
        #expect(try await phone.rows().count == count - deleted)
        try await laptop.engine.fetchChanges()
        let missing = Set(try await phone.rows()).symmetricDifference(try await laptop.rows()).sorted()
        #expect(missing.isEmpty, "\(count) games, pages of \(pageSize), \(deleted) deleted: differ \(missing.prefix(6)); \(watch.summary)")
    }

    /// Serializes a phone's random writes (updates of stretches, deletes, re-creates, new games)
    /// made from concurrent page requests.
    actor Writer {
        let phone: SyncTestDevice
        var random: SeededGenerator
        var stopped = false
        var steps = 0
        var next = 1_000

        init(phone: SyncTestDevice, seed: UInt64) {
            self.phone = phone
            random = SeededGenerator(state: seed)
        }

        func stop() { stopped = true }

        func step(count: Int) async throws {
            guard !stopped, steps < 40 else { return }
            steps += 1
            let start = Int.random(in: 0..<count, using: &random)
            let length = Int.random(in: 1...8, using: &random)
            let ids = (start..<min(count, start + length)).map { String(format: "'g%03d'", $0) }.joined(separator: ",")
            switch Int.random(in: 0..<5, using: &random) {
            case 0, 1:
                try await phone.execute("UPDATE games SET score = score + 1000 WHERE id IN (\(ids))")
            case 2:
                try await phone.execute("DELETE FROM games WHERE id IN (\(ids))")
            case 3:
                // Re-creates (or creates) games in the stretch: deleted ones come back.
                try await phone.execute(
                    "INSERT OR REPLACE INTO games (id, title, score) SELECT value, 'again', 7 FROM json_each('[\(ids.replacingOccurrences(of: "'", with: "\""))]')"
                )
            default:
                next += 1
                try await phone.execute("INSERT INTO games (id, title, score) VALUES ('n\(next)', 'new', \(next))")
            }
            try await phone.engine.sendChanges()
        }
    }

    /// DEFECT (the gap of ``aPartlyResavedSecondPageLeavesRecordsOut`` in random shapes):
    /// another device writes before every page the laptop asks for (stretches updated, deleted,
    /// re-created, new games); once the writing stops, one more fetch should bring the laptop
    /// to the phone's rows. Most seeds end with rows missing or stale for good.
    @Test(arguments: [0, 1, 2, 3, 4, 5], [1, 2, 3, 5])
    func randomWritesBeforeEveryPage(seed: UInt64, pageSize: Int) async throws {
        for (name, encryption) in Self.encryptions {
            let cloud = MockCloud()
            let count = 30
            let phone = try await Self.phone(cloud, count: count, encryption: encryption)
            let writer = Writer(phone: phone, seed: seed &* 31 &+ UInt64(pageSize))
            let watch = Watch { _, _, _, _, _ in try await writer.step(count: count) }
            let laptop = try await Self.laptop(cloud, watch, pageSize: pageSize, encryption: encryption)
            try await laptop.engine.fetchChanges()
            await writer.stop()
            try await laptop.engine.fetchChanges()
            let differ = Set(try await phone.rows()).symmetricDifference(try await laptop.rows()).sorted()
            #expect(differ.isEmpty, "seed \(seed), pages of \(pageSize), \(name): differ \(differ.prefix(6)); \(watch.summary)")
        }
    }

    /// With nothing changing, the pages come in runs from planned starts
    /// (``PlannedPagesEngineTests/plannedWithoutPlanning(pages:)``), with encryption on and off, and
    /// every row arrives (a regression check of the happy path at page sizes the in-tree tests
    /// do not use: 1, count − 1, count, count + 1).
    @Test(arguments: [(10, 1), (10, 9), (10, 10), (10, 11), (2, 1), (1, 1)])
    func aQuietZoneComesFromPlannedStarts(count: Int, pageSize: Int) async throws {
        for (name, encryption) in Self.encryptions {
            let cloud = MockCloud()
            let phone = try await Self.phone(cloud, count: count, encryption: encryption)
            let watch = Watch()
            let laptop = try await Self.laptop(cloud, watch, pageSize: pageSize, encryption: encryption)
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == (try await phone.rows()), "\(name)")
            let pages = (count + pageSize - 1) / pageSize
            let state = watch.state.withLock { ($0.asked.count, $0.askedFromPlanned) }
            #expect(state.0 == pages, "\(name): \(watch.summary)")
            #expect(state.1 == PlannedPagesEngineTests.plannedWithoutPlanning(pages: pages), "\(name): \(watch.summary)")
        }
    }

    /// A fetch cancelled while a page from a planned start is asked for, after part of the
    /// zone was saved again; a later fetch (writes stopped) brings every row.
    ///
    /// With `writesDuringFetch`, the failures are the gap of
    /// ``aPartlyResavedSecondPageLeavesRecordsOut`` (DEFECT); without, the phone writes only
    /// between the cancelled fetch and the next, which isolates the cancellation, and holds.
    @Test(arguments: [2, 3, 5], [true, false])
    func aFetchCancelledAtAPlannedPageResumesWhole(cancelAt: Int, writesDuringFetch: Bool) async throws {
        let cloud = MockCloud()
        let phone = try await Self.phone(cloud, count: 40, encryption: .endToEnd)
        let writer = Writer(phone: phone, seed: UInt64(cancelAt))
        let fetch = Mutex<Task<Void, any Error>?>(nil)
        let watch = Watch { index, _, _, _, _ in
            if writesDuringFetch { try await writer.step(count: 40) }
            if index == cancelAt { fetch.withLock { $0 }?.cancel() }
        }
        let laptop = try await Self.laptop(cloud, watch, pageSize: 4, encryption: .endToEnd)
        let task = Task { try await laptop.engine.fetchChanges() }
        fetch.withLock { $0 = task }
        _ = await task.result
        for _ in 0..<5 { try await writer.step(count: 40) }
        await writer.stop()
        try await laptop.engine.fetchChanges()
        let differ = Set(try await phone.rows()).symmetricDifference(try await laptop.rows()).sorted()
        #expect(
            differ.isEmpty, "cancelled at \(cancelAt), writes during \(writesDuringFetch): differ \(differ.prefix(6)); \(watch.summary)")
    }

    struct Crash: Error {}

    /// A fetch that dies at a page (as a crash would, after part of the zone was written
    /// again), then a new engine over the same database fetches again: every row arrives.
    ///
    /// With `writesDuringFetch`, the failures are the gap of
    /// ``aPartlyResavedSecondPageLeavesRecordsOut`` (DEFECT); without, the phone writes only
    /// between the crash and the restart, which isolates the restart, and holds.
    @Test(arguments: [2, 3, 4, 6], [true, false])
    func aFetchRepeatedAfterARestartIsWhole(crashAt: Int, writesDuringFetch: Bool) async throws {
        let cloud = MockCloud()
        let phone = try await Self.phone(cloud, count: 40, encryption: .endToEnd)
        let writer = Writer(phone: phone, seed: 77 &+ UInt64(crashAt))
        let watch = Watch { index, _, _, _, _ in
            if writesDuringFetch { try await writer.step(count: 40) }
            if index >= crashAt { throw Crash() }
        }
        let laptop = try await Self.laptop(cloud, watch, pageSize: 3, encryption: .endToEnd)
        await #expect(throws: (any Error).self) { try await laptop.engine.fetchChanges() }
        for _ in 0..<5 { try await writer.step(count: 40) }
        let restartedWatch = Watch { _, _, _, _, _ in if writesDuringFetch { try await writer.step(count: 40) } }
        let restarted = try await SyncTestDevice(
            "laptop", container: WatchedContainer(base: cloud.container(user: "alice"), watch: restartedWatch), schema: "",
            fetchPageSize: 3, database: laptop.database)
        try await restarted.engine.fetchChanges()
        await writer.stop()
        try await restarted.engine.fetchChanges()
        let differ = Set(try await phone.rows()).symmetricDifference(try await restarted.rows()).sorted()
        #expect(
            differ.isEmpty,
            "crashed at \(crashAt), writes during \(writesDuringFetch): differ \(differ.prefix(6)); \(restartedWatch.summary)")
    }
}
