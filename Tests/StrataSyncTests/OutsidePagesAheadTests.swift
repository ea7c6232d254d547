import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// An outside tester's attack on pages asked for two ahead of the one applied (`PagesAhead`,
/// `SyncEngine.fetchZone`) and on a page's records opened with keys looked up once per page
/// (`EncryptedCloudDatabase.KeysInUse`).
///
/// The zone feed is `OutsideArrivingPagesTests.ScriptedFeed`: page `i` is asked for from token
/// `s:i` and the test decides what each request and each read does.
@Suite(.timeLimit(.minutes(5))) struct OutsidePagesAheadTests {
    static let zone = OutsideArrivingPagesTests.zone
    let outside = OutsideArrivingPagesTests()

    /// A sender holding `games` games in the cloud, and a feed of them `pageSize` a page.
    func setUp(
        games: Int, pageSize: Int, encryption: SyncEncryption
    ) async throws -> (cloud: MockCloud, sender: SyncTestDevice, feed: OutsideArrivingPagesTests.ScriptedFeed) {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("sender", cloud: cloud, encryption: encryption)
        let values = (0..<games).map { "('g\(String(format: "%03d", $0))', 'Game \($0)')" }.joined(separator: ", ")
        try await sender.execute("INSERT INTO games (id, title) VALUES \(values)")
        try await sender.engine.sendChanges()
        let records = outside.stored(cloud).values.sorted { $0.id.name < $1.id.name }
        #expect(records.count == games)
        let pages = OutsideArrivingPagesTests.chunks(records, pageSize).map { OutsideArrivingPagesTests.ScriptedFeed.Page(changed: $0) }
        return (cloud, sender, OutsideArrivingPagesTests.ScriptedFeed(pages))
    }

    /// The games a device holds (as record names) and the zone token it saved, read in one
    /// transaction.
    static func snapshot(_ device: SyncTestDevice) async throws -> (names: Set<String>, token: String?) {
        try await device.database.read { db in
            (
                Set(try String.fetchAll(db, sql: "SELECT id || ':games' FROM games")),
                try EngineState.value(EngineState.zoneToken(Self.zone), in: db)
            )
        }
    }

    /// How many pages from the first are applied whole.
    static func appliedPrefix(_ names: Set<String>, feed: OutsideArrivingPagesTests.ScriptedFeed) -> Int {
        var count = 0
        for page in feed.pages {
            guard page.changed.allSatisfy({ names.contains($0.id.name) }) else { break }
            count += 1
        }
        return count
    }

    static func tokenIndex(_ token: String?) -> Int? {
        guard let token else { return 0 }
        guard token.hasPrefix("s:") else { return nil }
        return Int(token.dropFirst(2))
    }

    /// Waits for `condition` at most `seconds`, returning whether it held.
    static func holds(within seconds: Int, _ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(seconds))
        var check = 0
        while !condition() {
            if ContinuousClock.now > deadline { return false }
            try await pause(afterCheck: check)
            check += 1
        }
        return true
    }

    // MARK: - Order, bounds, tokens

    /// Nothing is asked for past the last page, whatever the number of pages; every page is
    /// asked for exactly once, in order.
    @Test(arguments: [(1, 1), (1, 2), (2, 1), (3, 1), (4, 2), (5, 2), (6, 1), (7, 3)], [SyncEncryption.disabled, .endToEnd])
    func everyPageIsAskedForOnceAndNothingPastTheLast(shape: (games: Int, pageSize: Int), encryption: SyncEncryption) async throws {
        let (cloud, sender, feed) = try await setUp(games: shape.games, pageSize: shape.pageSize, encryption: encryption)
        let receiver = try await outside.receiver(cloud, feed: feed, pageSize: shape.pageSize, encryption: encryption)
        try await receiver.engine.fetchChanges()
        #expect(try await receiver.rows() == sender.rows())
        #expect(feed.requests == Array(0..<feed.pages.count), "asked \(feed.requests) of \(feed.pages.count) pages")
    }

    /// Through `MockCloud` itself (the first page may come with the database's changes): the
    /// receiver asks for no more zone pages than the zone has.
    @Test(arguments: [(1, 1), (2, 1), (3, 1), (4, 2), (5, 2), (9, 4)])
    func throughTheMockCloudNoPageIsAskedForPastTheLast(shape: (games: Int, pageSize: Int)) async throws {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("sender", cloud: cloud, encryption: .disabled)
        for index in 0..<shape.games { try await sender.execute("INSERT INTO games (id, title) VALUES ('g\(index)', 'Game \(index)')") }
        try await sender.engine.sendChanges()
        // The zone's pages, counted by hand.
        var pages = 0
        var token: CloudChangeToken?
        while true {
            let page = try await cloud.container(user: "alice").privateDatabase.fetchZoneChanges(
                Self.zone, since: token, limit: shape.pageSize)
            pages += 1
            token = page.token
            if !page.moreComing { break }
        }
        for sync in [false, true] {
            let receiver = try await SyncTestDevice("r\(sync)", cloud: cloud, fetchPageSize: shape.pageSize, encryption: .disabled)
            let before = cloud.requestCount(.fetchZoneChanges)
            if sync {
                try await receiver.execute("INSERT INTO games (id, title) VALUES ('local', 'Local')")
                try await receiver.engine.syncChanges()
            } else {
                try await receiver.engine.fetchChanges()
            }
            let asked = cloud.requestCount(.fetchZoneChanges) - before
            #expect(asked <= pages, "sync \(sync): \(asked) zone requests for \(pages) pages")
            #expect(
                try await receiver.strings("SELECT id FROM games WHERE id <> 'local' ORDER BY id")
                    == sender.strings("SELECT id FROM games ORDER BY id"))
        }
    }

    /// A request two pages ahead fails while the page two before it is read: the two pages
    /// before the failing one are applied first and their tokens saved, the failure surfaces
    /// only when its page is taken, and the next fetch starts exactly at the failed page.
    @Test(arguments: [2, 3, 4, 5], [SyncEncryption.disabled, .endToEnd])
    func anErrorTwoPagesAheadSurfacesOnlyWhenItsPageIsTaken(failing: Int, encryption: SyncEncryption) async throws {
        let (cloud, sender, feed) = try await setUp(games: 7, pageSize: 1, encryption: encryption)
        let receiver = try await outside.receiver(cloud, feed: feed, pageSize: 1, encryption: encryption)
        feed.setHooks(
            .init(
                request: { index in
                    if index == failing { throw OutsideArrivingPagesTests.FeedFault(page: index) }
                },
                read: { index in
                    // The page two before the failing one is read only once the failing
                    // request was made (and failed): its failure is known ahead.
                    if index == failing - 2 { try await waitUntil { feed.requests.contains(failing) } }
                }))
        await #expect(throws: OutsideArrivingPagesTests.FeedFault(page: failing)) { try await receiver.engine.fetchChanges() }
        let (names, token) = try await Self.snapshot(receiver)
        #expect(Self.appliedPrefix(names, feed: feed) == failing, "applied \(names.sorted()) before the failure of page \(failing)")
        #expect(token == "s:\(failing)", "saved token \(String(describing: token)) after a failure at page \(failing)")
        #expect(!feed.requests.contains(failing + 1), "asked past a failed request: \(feed.requests)")
        feed.setHooks(.init())
        let before = feed.requests.count
        try await receiver.engine.fetchChanges()
        #expect(feed.requests.dropFirst(before).first == failing, "the retry asked \(Array(feed.requests.dropFirst(before)))")
        #expect(try await receiver.rows() == sender.rows())
    }

    /// At each request, what the receiver holds: the saved token never passes a page not
    /// applied, at most one page is applied past the saved token (what a crash re-applies),
    /// and a page is asked for only once the page three before it was applied (three pages
    /// at most wait in memory).
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func theSavedTokenAndThePagesAheadStayWithinTheirBounds(encryption: SyncEncryption) async throws {
        let (cloud, sender, feed) = try await setUp(games: 9, pageSize: 1, encryption: encryption)
        let receiver = try await outside.receiver(cloud, feed: feed, pageSize: 1, encryption: encryption)
        let problems = Mutex<[String]>([])
        let checks = Mutex(0)
        let hook: @Sendable (Int) async throws -> Void = { index in
            let (names, token) = try await Self.snapshot(receiver)
            let applied = Self.appliedPrefix(names, feed: feed)
            checks.withLock { $0 += 1 }
            guard let saved = Self.tokenIndex(token) else {
                problems.withLock { $0.append("page \(index): unknown token \(String(describing: token))") }
                return
            }
            var found: [String] = []
            if saved > applied { found.append("token s:\(saved) saved with only \(applied) pages applied") }
            if applied - saved > 1 { found.append("\(applied) pages applied, token s:\(saved): a crash re-applies \(applied - saved)") }
            if index >= 3 && applied < index - 2 { found.append("asked while only \(applied) pages were applied") }
            // One record a page: any record past the applied pages was applied out of order.
            if names.count != applied { found.append("a page applied out of order: \(names.sorted())") }
            if !found.isEmpty { problems.withLock { $0.append("page \(index): " + found.joined(separator: "; ")) } }
        }
        feed.setHooks(.init(request: hook, read: hook))
        try await receiver.engine.fetchChanges()
        #expect(problems.withLock { $0 }.isEmpty, "\(problems.withLock { $0 })")
        #expect(checks.withLock { $0 } >= 2 * feed.pages.count)
        #expect(try await receiver.rows() == sender.rows())
    }

    // MARK: - Stalls and expired tokens

    /// The cloud says more comes with the token the page was asked from, at page `stalling`,
    /// after pages were asked for ahead: a typed stall, after a bounded number of requests,
    /// with every page before it applied.
    @Test(arguments: [0, 1, 2, 4])
    func moreComingWithTheSameTokenAfterPagesAheadIsATypedStall(stalling: Int) async throws {
        let (cloud, _, feed) = try await setUp(games: 7, pageSize: 1, encryption: .disabled)
        let requests = Mutex(0)
        var container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        container.fetchArriving = { zone, token, limit, next in
            guard zone == Self.zone else { return ArrivingZoneChanges(try await next.fetchZoneChanges(zone, since: token, limit: limit)) }
            let count = requests.withLock { count in
                count += 1
                return count
            }
            // A loop asks without end: bounded here, the fetch fails with this instead.
            if count > 60 { throw OutsideArrivingPagesTests.FeedFault(page: -1) }
            let arriving = try await feed.arriving(since: token)
            guard try feed.index(of: token) == stalling else { return arriving }
            let same = token ?? CloudChangeToken("s:0")
            return ArrivingZoneChanges(token: same, moreComing: true) {
                var page = try await arriving.changes()
                page.token = same
                page.moreComing = true
                return page
            }
        }
        let receiver = try await SyncTestDevice("receiver", container: container, fetchPageSize: 1, encryption: .disabled)
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled(let zone, _) = error else { return false }
            return zone == Self.zone
        }
        let asked = requests.withLock { $0 }
        // The stall shows once a page comes back with the token it was asked from: at the
        // first page (asked from no token) only at the page after it. Each page taken has
        // `depth` more asked for behind it.
        let shownAt = stalling == 0 ? 1 : stalling
        #expect(asked <= shownAt + 1 + PagesAhead<FetchedPage>.depth, "\(asked) requests for a stall at page \(stalling)")
        let (names, _) = try await Self.snapshot(receiver)
        #expect(Self.appliedPrefix(names, feed: feed) >= stalling)
    }

    /// Page 2's token always expires, and the request for it is made while page 0 is read:
    /// the zone restarts from scratch a bounded number of times, then a typed stall; one
    /// expiry counts once although the requests behind it fail too.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func aTokenThatAlwaysExpiresTwoPagesAheadEndsInATypedStall(encryption: SyncEncryption) async throws {
        let (cloud, _, feed) = try await setUp(games: 6, pageSize: 1, encryption: encryption)
        let receiver = try await outside.receiver(cloud, feed: feed, pageSize: 1, encryption: encryption)
        feed.setHooks(
            .init(
                request: { index in
                    if index == 2 { throw CloudError.changeTokenExpired }
                    if feed.requests.count > 80 { throw OutsideArrivingPagesTests.FeedFault(page: index) }
                },
                read: { index in
                    // Page 2 asked for (again) since page 0 last was.
                    if index == 0 {
                        try await waitUntil {
                            let requests = feed.requests
                            guard let start = requests.lastIndex(of: 0) else { return false }
                            return requests[start...].contains(2)
                        }
                    }
                }))
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled = error else { return false }
            return true
        }
        let requests = feed.requests
        let restarts = requests.filter { $0 == 0 }.count
        #expect(restarts == 1 + SyncEngine.maximumZoneRestarts, "asked \(requests)")
        #expect(requests.count <= 3 * restarts, "asked \(requests)")
        #expect(!requests.contains(3), "asked past an expired page: \(requests)")
    }

    // MARK: - Cancellation and what is left behind

    /// The fetch is cancelled while page 0 is read and page 1's request travels (it hangs
    /// until cancelled): that request is cancelled, page 2 is never asked for, and the next
    /// fetch loses nothing.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func cancellingTheFetchCancelsTheRequestAhead(encryption: SyncEncryption) async throws {
        let (cloud, sender, feed) = try await setUp(games: 5, pageSize: 1, encryption: encryption)
        let receiver = try await outside.receiver(cloud, feed: feed, pageSize: 1, encryption: encryption)
        let requestCancelled = SharedFlag()
        let reading = SharedFlag()
        feed.setHooks(
            .init(
                request: { index in
                    guard index == 1 else { return }
                    do { try await Task.sleep(for: .seconds(30)) } catch {
                        requestCancelled.value.store(true, ordering: .sequentiallyConsistent)
                        throw error
                    }
                },
                read: { index in
                    guard index == 0 else { return }
                    try await waitUntil { feed.requests.contains(1) }
                    reading.value.store(true, ordering: .sequentiallyConsistent)
                    try await Task.sleep(for: .seconds(30))
                }))
        let fetch = Task { try await receiver.engine.fetchChanges() }
        try await waitUntil { reading.value.load(ordering: .sequentiallyConsistent) }
        fetch.cancel()
        let result = await fetch.result
        if case .success = result { Issue.record("a cancelled fetch with a page unread returned success") }
        #expect(
            try await Self.holds(within: 10) { requestCancelled.value.load(ordering: .sequentiallyConsistent) },
            "the request ahead was not cancelled with the fetch")
        #expect(!feed.requests.contains(2), "asked \(feed.requests)")
        try await outside.checkRecovery(receiver, sender: sender, feed: feed)
    }

    /// Pages 1 and 2 arrived ahead and their records are being read when the fetch ends
    /// (page 0's read fails, or the fetch is cancelled): the reads of the pages ahead are
    /// cancelled with it, rather than going on (opening records, fetching keys, holding the
    /// pages in memory) for a fetch that is over.
    @Test(arguments: [false, true], [SyncEncryption.disabled, .endToEnd])
    func pagesReadAheadAreNotLeftReadingWhenTheFetchEnds(cancel: Bool, encryption: SyncEncryption) async throws {
        let (cloud, sender, feed) = try await setUp(games: 5, pageSize: 1, encryption: encryption)
        let receiver = try await outside.receiver(cloud, feed: feed, pageSize: 1, encryption: encryption)
        let readsStarted = Mutex<Set<Int>>([])
        let readsCancelled = Mutex<Set<Int>>([])
        let pageZeroBlocked = SharedFlag()
        feed.setHooks(
            .init(read: { index in
                if index == 0 {
                    try await waitUntil { readsStarted.withLock { $0.isSuperset(of: [1, 2]) } }
                    if !cancel { throw OutsideArrivingPagesTests.FeedFault(page: 0) }
                    pageZeroBlocked.value.store(true, ordering: .sequentiallyConsistent)
                    try await Task.sleep(for: .seconds(30))
                    return
                }
                guard index == 1 || index == 2 else { return }
                readsStarted.withLock { _ = $0.insert(index) }
                do { try await Task.sleep(for: .seconds(30)) } catch {
                    readsCancelled.withLock { _ = $0.insert(index) }
                    throw error
                }
            }))
        let fetch = Task { try await receiver.engine.fetchChanges() }
        if cancel {
            try await waitUntil { pageZeroBlocked.value.load(ordering: .sequentiallyConsistent) }
            fetch.cancel()
        }
        let result = await fetch.result
        if case .success = result { Issue.record("the fetch succeeded with page 0 unread") }
        let cancelled = try await Self.holds(within: 10) { readsCancelled.withLock { $0 } == [1, 2] }
        #expect(
            cancelled,
            "the fetch ended (\(result)), and 10 s later the reads of the pages ahead still ran: cancelled \(readsCancelled.withLock { $0 }.sorted()) of [1, 2]"
        )
        try await outside.checkRecovery(receiver, sender: sender, feed: feed)
    }

    // MARK: - Keys looked up once a page

    /// One page (or pages of 1 and 3) holding, in a mixed order, records sealed with key
    /// version 1 and with version 2 after a rotation, a record sealed with the retired version
    /// 1 after its retirement, a version-1 and a version-2 record with a flipped bit, and an
    /// unsealed record: the good ones open and apply, each bad one is quarantined, and the
    /// page's other records are not held back by them.
    @Test(arguments: [1, 3, 200])
    func aPageMixingKeyVersionsRetiredTamperedAndUnsealedRecords(pageSize: Int) async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, user: "alice", time: time)
        let b = try await SyncTestDevice("b", cloud: cloud, user: "bob", time: time)
        for device in [a, b] { device.engine.start() }
        try await a.execute("INSERT INTO games (id, title) VALUES ('g0', 'zero v1'), ('g1', 'one v1'), ('g2', 'two v1')")
        try await a.engine.sendChanges()
        try await b.engine.syncChanges()
        let shared = try await a.engine.share(record: SharedGame(id: "g0", title: "zero v1")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        }
        _ = try await b.engine.acceptShare(url: shared.url)
        _ = try await a.engine.share(record: SharedGame(id: "g0", title: "zero v1")) { share in
            share.participants.removeAll { $0.user == "bob" }
        }
        try await a.execute("INSERT INTO games (id, title) VALUES ('g3', 'three v2'), ('g4', 'four v2'), ('g5', 'five v2')")
        try await a.engine.syncChanges()
        let stored = outside.stored(cloud)
        func sealed(_ name: String) throws -> CloudRecord { try #require(stored["\(name):games"]) }
        for name in ["g1", "g2"] { #expect(RecordSealing.keyVersion(of: try sealed(name)) == 1, "\(name)") }
        for name in ["g3", "g4", "g5"] { #expect(RecordSealing.keyVersion(of: try sealed(name)) == 2, "\(name)") }
        let keyring = try #require(a.engine.keyring)
        let retiredKey = try await keyring.key(for: Self.zone, version: 1)
        let retiredAt = try #require(retiredKey.retiredAt, "version 1 was not retired by the rotation")

        func flipped(_ record: CloudRecord) throws -> CloudRecord {
            var record = record
            guard case .bytes(var data)? = record.fields[RecordSealing.fieldName] else { throw CloudError.limitExceeded }
            data[data.count - 5] ^= 0x01
            record.fields[RecordSealing.fieldName] = .bytes(data)
            return record
        }
        let late = HybridTimestamp(milliseconds: retiredAt.milliseconds + 10 * 60_000, counter: 0, node: "removed")
        let retiredWrite = try RecordSealing.seal(
            CloudRecord(
                id: CloudRecordID(name: "r0:games", zone: Self.zone), type: "games",
                fields: ["id": .text("r0"), "title": .text("written with a retired key"), "score": .null],
                fieldVersions: ["id": late, "title": late, "score": late]),
            with: retiredKey)
        var unsealed = try sealed("g2")
        unsealed.id = CloudRecordID(name: "u0:games", zone: Self.zone)
        unsealed.fields = ["id": .text("u0"), "title": .text("planted"), "score": .null]
        unsealed.fieldVersions = ["id": late, "title": late, "score": late]
        let mixed = [
            try sealed("g0"), retiredWrite, try sealed("g3"), try flipped(try sealed("g1")), try sealed("g2"), unsealed,
            try flipped(try sealed("g4")), try sealed("g5"),
        ]
        let feed = OutsideArrivingPagesTests.ScriptedFeed(
            OutsideArrivingPagesTests.chunks(mixed, pageSize).map { OutsideArrivingPagesTests.ScriptedFeed.Page(changed: $0) })
        let receiver = try await outside.receiver(cloud, feed: feed, pageSize: pageSize, encryption: .endToEnd)
        try await receiver.engine.fetchChanges()
        #expect(
            try await receiver.rows() == [
                "game g0 'zero v1' NULL", "game g2 'two v1' NULL", "game g3 'three v2' NULL", "game g5 'five v2' NULL",
            ])
        #expect(receiver.engine.status.quarantinedCount == 4)
        let quarantined = try await receiver.strings("SELECT CAST(count(*) AS TEXT) FROM strata_sync.quarantined_records")
        #expect(quarantined == ["4"])
    }

    /// A participant's first fetch of a shared zone whose key was rotated after they accepted:
    /// pages mixing records sealed with both versions, the newer key fetched from the share
    /// in the middle of a page. Every row arrives, nothing is quarantined.
    @Test(arguments: [1, 2, 200])
    func aSharedZonesPagesMixingKeyVersionsOpenWithTheKeyFromTheShare(pageSize: Int) async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, user: "alice", time: time)
        let b = try await SyncTestDevice("b", cloud: cloud, user: "bob", time: time, fetchPageSize: pageSize)
        let c = try await SyncTestDevice("c", cloud: cloud, user: "carol", time: time)
        for device in [a, b, c] { device.engine.start() }
        try await a.execute(
            """
            INSERT INTO games (id, title) VALUES ('g1', 'Before');
            INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'one'), ('p2', 'g1', 'two');
            """)
        try await a.engine.sendChanges()
        let shared = try await a.engine.share(record: SharedGame(id: "g1", title: "Before")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            share.participants.append(CloudShare.Participant(user: "carol", permission: .readOnly))
        }
        _ = try await b.engine.acceptShare(url: shared.url)
        _ = try await c.engine.acceptShare(url: shared.url)
        _ = try await a.engine.share(record: SharedGame(id: "g1", title: "Before")) { share in
            share.participants.removeAll { $0.user == "carol" }
        }
        try await a.execute(
            """
            INSERT INTO players (id, gameID, name) VALUES ('p3', 'g1', 'three'), ('p4', 'g1', 'four');
            UPDATE players SET name = 'two again' WHERE id = 'p2';
            """)
        try await a.engine.syncChanges()
        let versions = Set(outside.stored(cloud).values.compactMap { RecordSealing.keyVersion(of: $0) })
        #expect(versions == [1, 2], "\(versions)")
        try await b.engine.fetchChanges()
        #expect(try await b.rows() == a.rows())
        #expect(b.engine.status.quarantinedCount == 0)
    }
}
