import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

/// A zone's fetch never loops without progress: a cloud that keeps saying "more" without
/// moving its token, or whose tokens keep expiring, ends the fetch with a typed error that
/// names the zone, not a retry for ever.
@Suite(.timeLimit(.minutes(1))) struct FetchLoopTests {
    func receiver(
        of cloud: MockCloud, _ fetchZone: @escaping InterceptingContainer.FetchZone
    ) async throws -> SyncTestDevice {
        var container = passingSends(cloud)
        container.fetchZone = fetchZone
        return try await SyncTestDevice("b", container: container, fetchPageSize: 2)
    }

    /// A cloud that device "a" sent games g0, g1, … to.
    func cloudWithGames(_ count: Int, encryption: SyncEncryption) async throws -> MockCloud {
        let cloud = MockCloud()
        let sender = try await SyncTestDevice("a", cloud: cloud, encryption: encryption)
        for index in 0..<count { try await sender.execute("INSERT INTO games (id, title) VALUES ('g\(index)', 'Game \(index)')") }
        try await sender.engine.sendChanges()
        return cloud
    }

    /// alice's container on `cloud`, its sends passed through, for a test to intercept fetches.
    func passingSends(_ cloud: MockCloud) -> InterceptingContainer {
        InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            try await next.modifyRecords(saving: saving, deleting: deleting)
        }
    }

    func sender(of cloud: MockCloud) async throws {
        let sender = try await SyncTestDevice("a", cloud: cloud)
        for index in 0..<5 { try await sender.execute("INSERT INTO games (id, title) VALUES ('g\(index)', 'Game \(index)')") }
        try await sender.engine.sendChanges()
    }

    @Test func moreComingWithAnUnmovedTokenIsAStall() async throws {
        let cloud = MockCloud()
        try await sender(of: cloud)
        let receiver = try await receiver(of: cloud) { zone, token, limit, next in
            guard token != nil else { return try await next.fetchZoneChanges(zone, since: nil, limit: limit) }
            // Past the first page, the same token back, with "more" still coming.
            var page = try await next.fetchZoneChanges(zone, since: token, limit: limit)
            page.token = try #require(token)
            page.moreComing = true
            return page
        }
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled(let zone, let reason) = error else { return false }
            return zone.name == "strata.default" && reason.contains("the one asked from")
        }
    }

    /// Tokens that go round in a circle (the third page hands back the first page's token,
    /// with more coming) end the fetch with a typed stall; without the check the fetch would
    /// ask from the two tokens in turn for ever (bounded here at 30 requests).
    @Test func tokensGoingRoundInACircleAreAStall() async throws {
        let cloud = MockCloud()
        try await sender(of: cloud)
        let requests = SharedCounter()
        let firstToken = Mutex<CloudChangeToken?>(nil)
        let receiver = try await receiver(of: cloud) { zone, token, limit, next in
            requests.increment()
            guard requests.count <= 30 else { throw LoopedForever() }
            var page = try await next.fetchZoneChanges(zone, since: token, limit: limit)
            if token == nil {
                firstToken.withLock { $0 = page.token }
            } else if token != firstToken.withLock({ $0 }) {
                // The second page's successor: the first page's token again.
                page.token = try #require(firstToken.withLock { $0 })
                page.moreComing = true
            }
            return page
        }
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled(_, let reason) = error else { return false }
            return reason.contains("given earlier in this fetch")
        }
        // The three pages, and at most the two asked for ahead of the third.
        #expect(requests.count <= 5)
    }

    /// A page whose records come with another token than the page arrived with (the one the
    /// pages ahead were asked from) is a cloud contradicting itself: a typed stall, and the
    /// token saved is never one the engine did not follow.
    @Test(arguments: [true, false])
    func aPageReadWithAnotherTokenThanItArrivedWithIsAStall(otherToken: Bool) async throws {
        let cloud = MockCloud()
        try await sender(of: cloud)
        var container = passingSends(cloud)
        container.fetchArriving = { zone, token, limit, next in
            let page = try await next.fetchZoneChanges(zone, since: token, limit: limit)
            return ArrivingZoneChanges(token: page.token, moreComing: page.moreComing) {
                var read = page
                if otherToken { read.token = CloudChangeToken("elsewhere") } else { read.moreComing.toggle() }
                return read
            }
        }
        let receiver = try await SyncTestDevice("b", container: container, fetchPageSize: 2)
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled(_, let reason) = error else { return false }
            return reason.contains("arrived with")
        }
    }

    @Test func tokensThatKeepExpiringEndTheFetch() async throws {
        let cloud = MockCloud()
        try await sender(of: cloud)
        let requests = SharedCounter()
        let receiver = try await receiver(of: cloud) { zone, token, limit, next in
            requests.increment()
            if token != nil { throw CloudError.changeTokenExpired }
            return try await next.fetchZoneChanges(zone, since: nil, limit: limit)
        }
        await #expect {
            try await receiver.engine.fetchChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled = error else { return false }
            return true
        }
        // The first page, then a restart's first page for each allowed restart, each followed
        // by a second page that expired.
        #expect(requests.count == 2 * 4)
    }

    /// The next page is asked for as soon as a page arrives, before its records are read
    /// (and opened): reading a page here waits until the next one was asked for, so a fetch
    /// that read each page before asking for the next would never finish.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func theNextPageIsAskedForBeforeThisPageIsRead(encryption: SyncEncryption) async throws {
        let cloud = try await cloudWithGames(7, encryption: encryption)
        let asked = AskedTokens()
        var container = passingSends(cloud)
        container.fetchArriving = { zone, token, limit, next in
            await asked.asked(token)
            let page = try await next.fetchZoneChanges(zone, since: token, limit: limit)
            return ArrivingZoneChanges(token: page.token, moreComing: page.moreComing) {
                if page.moreComing { try await asked.waitUntilAsked(page.token) }
                return page
            }
        }
        let receiver = try await SyncTestDevice("b", container: container, fetchPageSize: 2, encryption: encryption)
        try await receiver.engine.fetchChanges()
        #expect(try await receiver.strings("SELECT id FROM games ORDER BY id") == (0..<7).map { "g\($0)" })
        // Pages of 2 after the first (which may come with the database's changes).
        #expect(await asked.tokens.count >= 3)
    }

    /// The page after the next one is asked for as soon as the next one arrives, while this
    /// page is still read (and, had it been read, applied): reading a page here waits until
    /// the page after the next was asked for, so a fetch that asked for a page only once the
    /// one before it was applied would never finish.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func thePageAfterTheNextIsAskedForBeforeThisPageIsRead(encryption: SyncEncryption) async throws {
        let cloud = try await cloudWithGames(9, encryption: encryption)
        let asked = AskedTokens()
        var container = passingSends(cloud)
        container.fetchArriving = { zone, token, limit, next in
            await asked.asked(token)
            let page = try await next.fetchZoneChanges(zone, since: token, limit: limit)
            await asked.answered(token, with: page.token, moreComing: page.moreComing)
            return ArrivingZoneChanges(token: page.token, moreComing: page.moreComing) {
                if page.moreComing { try await asked.waitUntilThePageAfterIsAsked(page.token) }
                return page
            }
        }
        let receiver = try await SyncTestDevice("b", container: container, fetchPageSize: 2, encryption: encryption)
        try await receiver.engine.fetchChanges()
        #expect(try await receiver.strings("SELECT id FROM games ORDER BY id") == (0..<9).map { "g\($0)" })
        // Pages of 2 after the first, and none asked for past the last.
        let tokens = await asked.tokens
        #expect(tokens.count >= 4)
        #expect(Set(tokens).count == tokens.count)
    }
}

private struct LoopedForever: Error {}

/// The page tokens a fetch asked from, and a wait for one of them, bounded: a fetch that
/// never asks fails after 20 seconds instead of hanging the suite.
private actor AskedTokens {
    struct NeverAsked: Error { let token: CloudChangeToken }

    private(set) var tokens: [CloudChangeToken?] = []
    private var waiting: [CloudChangeToken: [CheckedContinuation<Void, any Error>]] = [:]
    /// What each request was answered: the next token, and whether more come.
    private var answers: [CloudChangeToken?: (token: CloudChangeToken, moreComing: Bool)] = [:]
    private var bounds: [CloudChangeToken: Task<Void, Never>] = [:]

    func asked(_ token: CloudChangeToken?) {
        tokens.append(token)
        guard let token else { return }
        bounds.removeValue(forKey: token)?.cancel()
        waiting.removeValue(forKey: token)?.forEach { $0.resume() }
    }

    func answered(_ token: CloudChangeToken?, with next: CloudChangeToken, moreComing: Bool) {
        answers[token] = (next, moreComing)
        if let token, let waiters = waitingForThePageAfter.removeValue(forKey: token) {
            // The page after this one is asked from `next` (or never, as none comes).
            for waiter in waiters {
                if moreComing {
                    Task { await self.forward(waiter, to: next) }
                } else {
                    waiter.resume()
                }
            }
        }
    }

    private var waitingForThePageAfter: [CloudChangeToken: [CheckedContinuation<Void, any Error>]] = [:]

    /// Returns once the page after the one asked from `token` was asked for (or that page
    /// was the last), bounded as ``waitUntilAsked(_:)`` is.
    func waitUntilThePageAfterIsAsked(_ token: CloudChangeToken) async throws {
        if let answer = answers[token] {
            guard answer.moreComing else { return }
            try await waitUntilAsked(answer.token)
            return
        }
        try await withCheckedThrowingContinuation { continuation in
            waitingForThePageAfter[token, default: []].append(continuation)
        }
    }

    private func forward(_ waiter: CheckedContinuation<Void, any Error>, to token: CloudChangeToken) async {
        do {
            try await waitUntilAsked(token)
            waiter.resume()
        } catch {
            waiter.resume(throwing: error)
        }
    }

    func waitUntilAsked(_ token: CloudChangeToken) async throws {
        guard !tokens.contains(token) else { return }
        try await withCheckedThrowingContinuation { continuation in
            waiting[token, default: []].append(continuation)
            if bounds[token] == nil {
                bounds[token] = Task {
                    try? await Task.sleep(for: .seconds(20))
                    guard !Task.isCancelled else { return }
                    self.expire(token)
                }
            }
        }
    }

    private func expire(_ token: CloudChangeToken) {
        bounds[token] = nil
        waiting.removeValue(forKey: token)?.forEach { $0.resume(throwing: NeverAsked(token: token)) }
    }
}
