import Foundation
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

/// An outside tester's attack on pages handed over before their records are read
/// (`fetchArrivingZoneChanges`, `ArrivingZoneChanges.changes()`) and on applying pages whose
/// children wait aside for their parents.
///
/// A sender writes rows to a `MockCloud`; the receiver's zone feed is a script over the records
/// the cloud holds (sealed or not): the test chooses their order, how they are cut into pages,
/// and which request or read fails, hangs or is cancelled. Whatever happens, a fetch that fails
/// throws the failure's own error, never hangs, and never saves a token past a page it did not
/// apply; the fetch after it ends with every row the sender has.
@Suite(.timeLimit(.minutes(5))) struct OutsideArrivingPagesTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    struct FeedFault: Error, Equatable {
        let page: Int
    }

    /// A zone feed of pages the test writes. Page `i` is asked for from token `s:i` (nil for
    /// page 0) and answers token `s:i+1`; past the last page, an empty page.
    final class ScriptedFeed: Sendable {
        struct Page: Sendable {
            var changed: [CloudRecord]
            var deleted: [CloudTombstone] = []
        }
        struct Hooks: Sendable {
            /// Runs when page `i` is asked for, before it is answered.
            var request: (@Sendable (Int) async throws -> Void)?
            /// Runs when page `i`'s records are read (`changes()`), before they are answered.
            var read: (@Sendable (Int) async throws -> Void)?
        }
        struct State {
            var requests: [Int] = []
            var reads: [Int] = []
            var hooks = Hooks()
        }

        let pages: [Page]
        let state = Mutex(State())

        init(_ pages: [Page]) { self.pages = pages }

        var requests: [Int] { state.withLock { $0.requests } }
        var reads: [Int] { state.withLock { $0.reads } }
        func setHooks(_ hooks: Hooks) { state.withLock { $0.hooks = hooks } }

        func index(of token: CloudChangeToken?) throws -> Int {
            guard let token else { return 0 }
            guard token.value.hasPrefix("s:"), let index = Int(token.value.dropFirst(2)) else { throw CloudError.changeTokenExpired }
            return index
        }

        func page(_ index: Int) -> CloudZoneChanges {
            let token = CloudChangeToken("s:\(min(index + 1, pages.count))")
            guard index < pages.count else {
                return CloudZoneChanges(changed: [], deleted: [], token: CloudChangeToken("s:\(pages.count)"), moreComing: false)
            }
            return CloudZoneChanges(
                changed: pages[index].changed, deleted: pages[index].deleted, token: token, moreComing: index + 1 < pages.count)
        }

        func arriving(since token: CloudChangeToken?) async throws -> ArrivingZoneChanges {
            let index = try index(of: token)
            let hooks = state.withLock { state in
                state.requests.append(index)
                return state.hooks
            }
            try await hooks.request?(index)
            let page = page(index)
            return ArrivingZoneChanges(token: page.token, moreComing: page.moreComing) {
                let hooks = self.state.withLock { state in
                    state.reads.append(index)
                    return state.hooks
                }
                try await hooks.read?(index)
                return page
            }
        }

        /// The names of the records of pages before `index`.
        func names(before index: Int) -> Set<String> {
            Set(pages.prefix(index).flatMap { $0.changed.map(\.id.name) })
        }
    }

    /// A receiver whose default zone's pages come from `feed`.
    func receiver(
        _ cloud: MockCloud, feed: ScriptedFeed, pageSize: Int, encryption: SyncEncryption
    ) async throws -> SyncTestDevice {
        var container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        container.fetchZone = { zone, token, limit, next in
            guard zone == Self.zone else { return try await next.fetchZoneChanges(zone, since: token, limit: limit) }
            return try await feed.arriving(since: token).changes()
        }
        container.fetchArriving = { zone, token, limit, next in
            guard zone == Self.zone else { return ArrivingZoneChanges(try await next.fetchZoneChanges(zone, since: token, limit: limit)) }
            return try await feed.arriving(since: token)
        }
        return try await SyncTestDevice("receiver", container: container, fetchPageSize: pageSize, encryption: encryption)
    }

    /// The records the cloud holds in the default zone, as stored (sealed with encryption), by name.
    func stored(_ cloud: MockCloud) -> [String: CloudRecord] {
        Dictionary(uniqueKeysWithValues: cloud.records(in: Self.zone).map { ($0.id.name, $0) })
    }

    static func chunks<T>(_ items: [T], _ size: Int) -> [[T]] {
        stride(from: 0, to: items.count, by: max(size, 1)).map { Array(items[$0..<min($0 + size, items.count)]) }
    }

    /// Names of the rows a device holds, as record names.
    func names(_ device: SyncTestDevice) async throws -> Set<String> {
        Set(
            try await device.strings("SELECT id || ':games' FROM games")
                + device.strings("SELECT id || ':players' FROM players"))
    }

    // MARK: - Records waiting aside

    /// `waiting` players arrive in pages before their games (so each waits aside), then the
    /// games in pages of `games`: 0, 1, a page's worth and one more waiting than the page that
    /// brings their parents has records.
    @Test(
        arguments: [
            (3, 0, 3), (3, 1, 3), (3, 3, 3), (3, 4, 3), (3, 4, 1), (3, 3, 1), (3, 2, 1), (1, 1, 1), (1, 2, 1), (2, 3, 1), (2, 3, 2),
            (4, 5, 4), (5, 12, 2),
        ], [SyncEncryption.disabled, .endToEnd])
    func childrenWaitingAsideFindTheirParents(
        _ shape: (pageSize: Int, waiting: Int, games: Int), encryption: SyncEncryption
    )
        async throws
    {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("sender", cloud: cloud, encryption: encryption)
        for game in 0..<shape.games { try await sender.execute("INSERT INTO games (id, title) VALUES ('g\(game)', 'Game \(game)')") }
        for player in 0..<shape.waiting {
            try await sender.execute(
                "INSERT INTO players (id, gameID, name) VALUES ('p\(player)', 'g\(player % shape.games)', 'Player \(player)')")
        }
        try await sender.engine.sendChanges()
        let records = stored(cloud)
        let players = records.values.filter { $0.id.name.hasSuffix(":players") }.sorted { $0.id.name < $1.id.name }
        let games = records.values.filter { $0.id.name.hasSuffix(":games") }.sorted { $0.id.name < $1.id.name }
        #expect(players.count == shape.waiting)
        #expect(games.count == shape.games)
        // Children first, in pages of the page size; then the games, in one page when they fit.
        let pages = Self.chunks(players, shape.pageSize) + Self.chunks(games, shape.pageSize)
        let feed = ScriptedFeed(pages.map { ScriptedFeed.Page(changed: $0) })
        let receiver = try await receiver(cloud, feed: feed, pageSize: shape.pageSize, encryption: encryption)
        try await receiver.engine.fetchChanges()
        #expect(try await receiver.rows() == sender.rows())
        #expect(feed.requests == Array(0...pages.count) || feed.requests == Array(0..<pages.count))
        // Nothing stays waiting: a second fetch (nothing new) changes nothing.
        try await receiver.engine.fetchChanges()
        #expect(try await receiver.rows() == sender.rows())
        #expect(try await receiver.pending() == 0)
    }

    /// Waiting children whose page also brings a newer copy of a waiting child, and whose
    /// parents arrive with the copy: the newer copy wins, and the child is applied once.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func aWaitingChildAndItsNewerCopyInTheParentsPage(encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("sender", cloud: cloud, encryption: encryption)
        try await sender.execute("INSERT INTO games (id, title) VALUES ('g0', 'Zero'), ('g1', 'One')")
        try await sender.execute(
            "INSERT INTO players (id, gameID, name) VALUES ('p0', 'g0', 'old'), ('p1', 'g1', 'old'), ('p2', 'g0', 'old')")
        try await sender.engine.sendChanges()
        let old = stored(cloud)
        try await sender.execute("UPDATE players SET name = 'new', gameID = 'g1' WHERE id = 'p0'")
        try await sender.engine.sendChanges()
        let new = stored(cloud)
        let feed = ScriptedFeed([
            ScriptedFeed.Page(changed: [old["p0:players"]!, old["p1:players"]!]),
            ScriptedFeed.Page(changed: [old["p2:players"]!]),
            ScriptedFeed.Page(changed: [new["p0:players"]!, old["g0:games"]!, old["g1:games"]!]),
        ])
        let receiver = try await receiver(cloud, feed: feed, pageSize: 3, encryption: encryption)
        try await receiver.engine.fetchChanges()
        #expect(try await receiver.rows() == sender.rows())
    }

    // MARK: - Random orders

    /// Parents and children in a seeded random order, cut into pages of random sizes, each
    /// record's first copy before its edited copy, copies repeated in the next page, and the
    /// deletions last: the receiver ends with the sender's rows.
    @Test(arguments: [1, 2, 3, 4, 5, 6], [SyncEncryption.disabled, .endToEnd])
    func randomOrdersAndRepeatedCopiesConverge(seed: UInt64, encryption: SyncEncryption) async throws {
        var random = SeededGenerator(state: seed)
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("sender", cloud: cloud, encryption: encryption)
        let gameCount = Int.random(in: 1...6, using: &random)
        for game in 0..<gameCount { try await sender.execute("INSERT INTO games (id, title) VALUES ('g\(game)', 'Game \(game)')") }
        for player in 0..<Int.random(in: 0...12, using: &random) {
            try await sender.execute(
                "INSERT INTO players (id, gameID, name) VALUES ('p\(player)', 'g\(Int.random(in: 0..<gameCount, using: &random))', 'P\(player)')"
            )
        }
        try await sender.engine.sendChanges()
        let first = stored(cloud)
        // Edits: titles, a player moved, a player deleted.
        try await sender.execute("UPDATE games SET title = title || ' edited', score = 7 WHERE id = 'g0'")
        try await sender.execute("UPDATE players SET gameID = 'g0', name = 'moved' WHERE id IN ('p1', 'p3')")
        try await sender.execute("DELETE FROM players WHERE id = 'p2'")
        try await sender.engine.sendChanges()
        let second = stored(cloud)
        let deleted = Set(first.keys).subtracting(second.keys).sorted()

        var copies = first.values.shuffled(using: &random)
        var edited = second.values.filter { first[$0.id.name]?.changeTag != $0.changeTag }.shuffled(using: &random)
        // An edited copy goes somewhere after its first copy.
        for record in edited {
            let after = (copies.firstIndex { $0.id.name == record.id.name } ?? -1) + 1
            copies.insert(record, at: Int.random(in: after...copies.count, using: &random))
        }
        edited.removeAll()
        let pageSize = Int.random(in: 1...4, using: &random)
        var pages: [ScriptedFeed.Page] = []
        var index = 0
        while index < copies.count {
            let size = Int.random(in: 1...pageSize, using: &random)
            var page = Array(copies[index..<min(index + size, copies.count)])
            // Now and then the page's last record again at the start of the next page.
            if let last = pages.last?.changed.last, Bool.random(using: &random), page.count < pageSize { page.insert(last, at: 0) }
            pages.append(ScriptedFeed.Page(changed: page))
            index += size
        }
        pages.append(
            ScriptedFeed.Page(
                changed: [], deleted: deleted.map { CloudTombstone(id: CloudRecordID(name: $0, zone: Self.zone), type: "players") }))
        let feed = ScriptedFeed(pages)
        let receiver = try await receiver(cloud, feed: feed, pageSize: pageSize, encryption: encryption)
        try await receiver.engine.fetchChanges()
        #expect(try await receiver.rows() == sender.rows(), "pages: \(pages.map { $0.changed.map(\.id.name) })")
    }

    // MARK: - Faults

    /// Games then players, 2 a page: 5 pages for 4 games and 6 players.
    func faultSetUp(encryption: SyncEncryption) async throws -> (cloud: MockCloud, sender: SyncTestDevice, feed: ScriptedFeed) {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("sender", cloud: cloud, encryption: encryption)
        try await sender.execute("INSERT INTO games (id, title) VALUES ('g0', 'A'), ('g1', 'B'), ('g2', 'C'), ('g3', 'D')")
        try await sender.execute(
            "INSERT INTO players (id, gameID, name) VALUES ('p0', 'g0', 'a'), ('p1', 'g1', 'b'), ('p2', 'g2', 'c'), ('p3', 'g3', 'd'), ('p4', 'g0', 'e'), ('p5', 'g1', 'f')"
        )
        try await sender.engine.sendChanges()
        let records = stored(cloud).values.sorted { lhs, rhs in
            let order = { (name: String) in name.hasSuffix(":games") ? 0 : 1 }
            return (order(lhs.id.name), lhs.id.name) < (order(rhs.id.name), rhs.id.name)
        }
        return (cloud, sender, ScriptedFeed(Self.chunks(records, 2).map { ScriptedFeed.Page(changed: $0) }))
    }

    /// After a fetch that failed: the next fetch starts from a page whose predecessors are all
    /// applied, and ends with the sender's rows.
    func checkRecovery(
        _ receiver: SyncTestDevice, sender: SyncTestDevice, feed: ScriptedFeed, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let applied = try await names(receiver)
        feed.setHooks(.init())
        let before = feed.requests.count
        try await receiver.engine.fetchChanges()
        let retry = Array(feed.requests.dropFirst(before))
        if let start = retry.first {
            let missing = feed.names(before: start).subtracting(applied)
            #expect(
                missing.isEmpty, "the saved token passed page(s) not applied: resumed at page \(start) without \(missing.sorted())",
                sourceLocation: sourceLocation)
        }
        #expect(try await receiver.rows() == sender.rows(), "retry asked \(retry)", sourceLocation: sourceLocation)
    }

    enum RequestFault: String, CaseIterable, Sendable {
        case network, zoneNotFound, custom, cancellation
        func error(_ page: Int) -> any Error {
            switch self {
            case .network: CloudError.networkFailure
            case .zoneNotFound: CloudError.zoneNotFound(OutsideArrivingPagesTests.zone)
            case .custom: FeedFault(page: page)
            case .cancellation: CancellationError()
            }
        }
    }

    /// A later page's request fails while the page before it is read and applied.
    @Test(arguments: RequestFault.allCases, [SyncEncryption.disabled, .endToEnd])
    func aLaterPagesRequestFails(fault: RequestFault, encryption: SyncEncryption) async throws {
        for failing in 1...4 {
            let (cloud, sender, feed) = try await faultSetUp(encryption: encryption)
            let receiver = try await receiver(cloud, feed: feed, pageSize: 2, encryption: encryption)
            feed.setHooks(.init(request: { index in if index == failing { throw fault.error(index) } }))
            do {
                try await receiver.engine.fetchChanges()
                // A transient failure may be retried inside the fetch: then every row is here.
                #expect(fault == .network, "\(fault) at page \(failing) did not end the fetch")
                #expect(try await receiver.rows() == sender.rows())
            } catch {
                switch fault {
                case .network: #expect((error as? CloudError) == .networkFailure, "page \(failing): \(error)")
                case .zoneNotFound: #expect(error is CloudError, "page \(failing): \(error)")
                case .custom: #expect((error as? FeedFault) == FeedFault(page: failing), "page \(failing): \(error)")
                case .cancellation: #expect(error is CancellationError, "page \(failing): \(error)")
                }
            }
            try await checkRecovery(receiver, sender: sender, feed: feed)
        }
    }

    /// A later page's token has expired once: the zone is fetched again from the start.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func aLaterPagesTokenExpiresOnce(encryption: SyncEncryption) async throws {
        for failing in 1...4 {
            let (cloud, sender, feed) = try await faultSetUp(encryption: encryption)
            let receiver = try await receiver(cloud, feed: feed, pageSize: 2, encryption: encryption)
            let expired = SharedFlag()
            feed.setHooks(
                .init(request: { index in
                    if index == failing, !expired.value.exchange(true, ordering: .sequentiallyConsistent) {
                        throw CloudError.changeTokenExpired
                    }
                }))
            try await receiver.engine.fetchChanges()
            #expect(try await receiver.rows() == sender.rows(), "expired at \(failing): asked \(feed.requests)")
            #expect(feed.requests.filter { $0 == 0 }.count == 2, "asked \(feed.requests)")
        }
    }

    /// Reading a page's records fails after the next page was asked for: the fetch ends with
    /// the read's error, the page is not applied, and its token is not saved.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func readingAPageFailsAfterTheNextWasAskedFor(encryption: SyncEncryption) async throws {
        for failing in 0...3 {
            let (cloud, sender, feed) = try await faultSetUp(encryption: encryption)
            let receiver = try await receiver(cloud, feed: feed, pageSize: 2, encryption: encryption)
            feed.setHooks(
                .init(read: { index in
                    guard index == failing else { return }
                    try await waitUntil { feed.requests.contains(failing + 1) }
                    throw FeedFault(page: index)
                }))
            await #expect(throws: FeedFault(page: failing)) { try await receiver.engine.fetchChanges() }
            let applied = try await names(receiver)
            let unapplied = Set(feed.pages[failing].changed.map(\.id.name)).intersection(applied)
            #expect(unapplied.isEmpty, "page \(failing) applied although it did not read: \(unapplied.sorted())")
            try await checkRecovery(receiver, sender: sender, feed: feed)
        }
    }

    /// Reading a page fails while the next page's request hangs (until cancelled): the fetch
    /// ends promptly with the read's error.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func aFailedReadDoesNotWaitForAHangingNextPage(encryption: SyncEncryption) async throws {
        let failing = 1
        let (cloud, sender, feed) = try await faultSetUp(encryption: encryption)
        let receiver = try await receiver(cloud, feed: feed, pageSize: 2, encryption: encryption)
        let hangingCancelled = SharedFlag()
        feed.setHooks(
            .init(
                request: { index in
                    guard index == failing + 1 else { return }
                    do { try await Task.sleep(for: .seconds(40)) } catch {
                        hangingCancelled.value.store(true, ordering: .sequentiallyConsistent)
                        throw error
                    }
                },
                read: { index in
                    guard index == failing else { return }
                    try await waitUntil { feed.requests.contains(failing + 1) }
                    throw FeedFault(page: index)
                }))
        let start = ContinuousClock.now
        await #expect(throws: FeedFault(page: failing)) { try await receiver.engine.fetchChanges() }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(20), "the fetch waited \(elapsed) for the page after the failed one")
        try await checkRecovery(receiver, sender: sender, feed: feed)
    }

    /// The fetch is cancelled while a page's records are read and the next page travels: it
    /// ends, and the next fetch loses nothing.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func cancellingTheFetchWhileAPageIsRead(encryption: SyncEncryption) async throws {
        for blocked in 0...3 {
            let (cloud, sender, feed) = try await faultSetUp(encryption: encryption)
            let receiver = try await receiver(cloud, feed: feed, pageSize: 2, encryption: encryption)
            let reading = SharedFlag()
            feed.setHooks(
                .init(read: { index in
                    guard index == blocked else { return }
                    reading.value.store(true, ordering: .sequentiallyConsistent)
                    try await Task.sleep(for: .seconds(40))
                }))
            let fetch = Task { try await receiver.engine.fetchChanges() }
            try await waitUntil { reading.value.load(ordering: .sequentiallyConsistent) }
            let start = ContinuousClock.now
            fetch.cancel()
            let result = await fetch.result
            #expect(ContinuousClock.now - start < .seconds(20), "cancellation took \(ContinuousClock.now - start)")
            if case .success = result { Issue.record("a cancelled fetch with a page unread returned success (page \(blocked))") }
            try await checkRecovery(receiver, sender: sender, feed: feed)
        }
    }

    /// The next page's request fails only once this page's read waited for it: the page read
    /// is applied or not, but never skipped.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func theNextRequestFailsWhileThisPageIsRead(encryption: SyncEncryption) async throws {
        for failing in 1...4 {
            let (cloud, sender, feed) = try await faultSetUp(encryption: encryption)
            let receiver = try await receiver(cloud, feed: feed, pageSize: 2, encryption: encryption)
            let failed = SharedFlag()
            feed.setHooks(
                .init(
                    request: { index in
                        if index == failing {
                            failed.value.store(true, ordering: .sequentiallyConsistent)
                            throw FeedFault(page: index)
                        }
                    },
                    read: { index in
                        if index == failing - 1 { try await waitUntil { failed.value.load(ordering: .sequentiallyConsistent) } }
                    }))
            await #expect(throws: FeedFault(page: failing)) { try await receiver.engine.fetchChanges() }
            try await checkRecovery(receiver, sender: sender, feed: feed)
        }
    }
}
