import Foundation
import StrataCloud
import Testing

@testable import StrataSync

/// The pages asked for ahead of the one applied, alone: a cloud of numbered pages in memory.
@Suite(.timeLimit(.minutes(1)))
struct PagesAheadTests {
    /// A page of a zone of `count` pages: page `number` is asked from token `number` (nil for
    /// the first) and hands out token `number + 1`.
    struct Page: Sendable, Equatable {
        var number: Int
        var moreComing: Bool
        /// The starts it planned: pages `number + 2` on.
        var following: [CloudChangeToken] = []
        var token: CloudChangeToken { CloudChangeToken("\(number + 1)") }
    }

    struct PastTheLastPage: Error { let number: Int }

    /// Serves the pages, recording each request's token; a request waits while its page is
    /// held (``hold(_:)``), and fails with `failure` when its page is `failing`.
    actor Cloud {
        let count: Int
        private(set) var asked: [Int] = []
        private var held: Set<Int> = []
        private var waiting: [Int: [CheckedContinuation<Void, Never>]] = [:]
        private var askedWaiters: [(number: Int, id: UUID, continuation: CheckedContinuation<Void, any Error>)] = []
        var failing: Int?
        var failure: any Error = CloudError.changeTokenExpired
        /// How many starts each page plans, and the pages that plan none.
        var planning = 0
        var planless: Set<Int> = []
        /// Requests made from a planned start.
        private(set) var askedPlanned: [Int] = []

        init(count: Int) { self.count = count }

        func plan(_ pages: Int, except planless: Set<Int> = []) {
            planning = pages
            self.planless = planless
        }

        func planned(since token: CloudChangeToken) async throws -> Page {
            askedPlanned.append(Int(token.value) ?? -1)
            return try await page(since: token)
        }

        func hold(_ page: Int) { held.insert(page) }

        func release(_ page: Int) {
            held.remove(page)
            waiting.removeValue(forKey: page)?.forEach { $0.resume() }
        }

        func fail(_ page: Int, with error: any Error) {
            failing = page
            failure = error
        }

        func page(since token: CloudChangeToken?) async throws -> Page {
            let number = token.flatMap { Int($0.value) } ?? 0
            asked.append(number)
            for waiter in askedWaiters where waiter.number == number { waiter.continuation.resume() }
            askedWaiters.removeAll { $0.number == number }
            if held.contains(number) { await withCheckedContinuation { waiting[number, default: []].append($0) } }
            if failing == number { throw failure }
            guard number < count else { throw PastTheLastPage(number: number) }
            let starts =
                planless.contains(number) || number + 2 >= count
                ? [] : (number + 2..<min(count, number + 2 + planning)).map { CloudChangeToken("\($0)") }
            return Page(number: number, moreComing: number < count - 1, following: number < count - 1 ? starts : [])
        }

        struct NeverAsked: Error { let number: Int }

        /// Returns once page `number` was asked for; throws after 20 seconds instead, so a
        /// request never made fails the test rather than hanging the suite.
        func waitUntilAsked(_ number: Int) async throws {
            guard !asked.contains(number) else { return }
            let id = UUID()
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                askedWaiters.append((number, id, continuation))
                Task {
                    try? await Task.sleep(for: .seconds(20))
                    self.expire(id, number: number)
                }
            }
        }

        private func expire(_ id: UUID, number: Int) {
            guard let index = askedWaiters.firstIndex(where: { $0.id == id }) else { return }
            askedWaiters.remove(at: index).continuation.resume(throwing: NeverAsked(number: number))
        }
    }

    static func pages(of cloud: Cloud) -> PagesAhead<Page> {
        PagesAhead(
            fetch: { token in try await cloud.page(since: token) },
            fetchPlanned: { start, _ in try await cloud.planned(since: start) },
            continuation: { page in page.moreComing ? page.token : nil },
            planned: { page in page.following })
    }

    /// With planned starts, the page two ahead is asked for as soon as the page two before it
    /// arrived: while page 1 is held by the cloud, page 2 travels beside it. Pages go in runs:
    /// one from the token of the page before, then the starts of that page's plan; a shorter
    /// plan leaves the rest of its run to the tokens.
    @Test(arguments: [1, 2, 4])
    func withPlannedStartsThePagesAheadTravelTogether(planning: Int) async throws {
        let cloud = Cloud(count: 8)
        await cloud.plan(planning)
        await cloud.hold(1)
        var ahead = Self.pages(of: cloud)
        defer { ahead.cancelAll() }
        let first = try await ahead.next(since: nil)
        #expect(first?.number == 0)
        try await cloud.waitUntilAsked(2)
        #expect(await cloud.askedPlanned == [2])
        await cloud.release(1)
        var taken = [first?.number]
        var token = first?.token
        while let page = try await ahead.next(since: token) {
            taken.append(page.number)
            token = page.token
            if !page.moreComing { break }
        }
        #expect(taken == Array(0..<8))
        // Each page asked for once, none past the last. Page 1 from page 0's token, 2 to 5 from
        // page 0's plan (as far as it goes), 6 from page 5's token, 7 from page 5's plan.
        #expect(await cloud.asked.sorted() == Array(0..<8))
        let expected = [1: [2, 7], 2: [2, 3, 7], 4: [2, 3, 4, 5, 7]][planning] ?? []
        #expect(await cloud.askedPlanned.sorted() == expected)
    }

    /// Pages that plan nothing (the last pages, a cloud's choice) leave their followers to be
    /// asked from the page before: every page still comes once and in order.
    @Test(arguments: [[1], [2, 3], [0, 4, 5], Array(0..<7)])
    func pagesThatPlanNothingAreFollowedByTheChain(planless: [Int]) async throws {
        let cloud = Cloud(count: 7)
        await cloud.plan(1, except: Set(planless))
        var ahead = Self.pages(of: cloud)
        var taken: [Int] = []
        var token: CloudChangeToken?
        while let page = try await ahead.next(since: token) {
            taken.append(page.number)
            token = page.token
            if !page.moreComing { break }
        }
        #expect(taken == Array(0..<7))
        #expect(await cloud.asked.sorted() == Array(0..<7))
        #expect(try await ahead.next(since: token) == nil)
    }

    @Test(arguments: [1, 2, 3, 4, 7])
    func everyPageComesInOrderAndNothingIsAskedForPastTheLast(count: Int) async throws {
        let cloud = Cloud(count: count)
        var ahead = Self.pages(of: cloud)
        var taken: [Int] = []
        var token: CloudChangeToken?
        while let page = try await ahead.next(since: token) {
            taken.append(page.number)
            token = page.token
            if !page.moreComing { break }
        }
        #expect(taken == Array(0..<count))
        // What was asked ahead behind the last page asks for nothing.
        #expect(try await ahead.next(since: token) == nil)
        #expect(await cloud.asked == Array(0..<count))
    }

    /// While the caller holds page 0 (applying it), pages 1 and 2 are asked for, each as soon
    /// as the one before it arrived; page 3 waits until page 1 is taken.
    @Test func theTwoPagesAfterTheOneTakenAreAskedForWhileItIsHeld() async throws {
        let cloud = Cloud(count: 10)
        var ahead = Self.pages(of: cloud)
        let first = try await ahead.next(since: nil)
        #expect(first?.number == 0)
        try await cloud.waitUntilAsked(2)
        #expect(ahead.count == 2)
        #expect(await cloud.asked.contains(3) == false)
        let second = try await ahead.next(since: first?.token)
        #expect(second?.number == 1)
        try await cloud.waitUntilAsked(3)
        #expect(ahead.count == 2)
    }

    /// A slow page holds back only the pages after it: the page taken is handed over as soon
    /// as it arrived, whatever the requests behind it do.
    @Test func aPageHeldByTheCloudHoldsBackOnlyThePagesAfterIt() async throws {
        let cloud = Cloud(count: 5)
        await cloud.hold(2)
        var ahead = Self.pages(of: cloud)
        let first = try await ahead.next(since: nil)
        let second = try await ahead.next(since: first?.token)
        #expect(second?.number == 1)
        try await cloud.waitUntilAsked(2)
        #expect(await cloud.asked == [0, 1, 2])
        await cloud.release(2)
        let third = try await ahead.next(since: second?.token)
        #expect(third?.number == 2)
        try await cloud.waitUntilAsked(4)
        #expect(await cloud.asked == [0, 1, 2, 3, 4])
    }

    /// A request's failure reaches the caller with the page it was for, not before: the pages
    /// before it are taken first. The requests behind it ask for nothing; after
    /// ``PagesAhead/cancelAll()`` the next page is asked from the caller's token again.
    @Test func aFailureComesWithItsPageAndTheCallerStartsAgainFromItsToken() async throws {
        let cloud = Cloud(count: 6)
        await cloud.fail(2, with: CloudError.changeTokenExpired)
        var ahead = Self.pages(of: cloud)
        let first = try await ahead.next(since: nil)
        let second = try await ahead.next(since: first?.token)
        #expect(second?.number == 1)
        await #expect(throws: CloudError.changeTokenExpired) { try await ahead.next(since: second?.token) }
        #expect(await cloud.asked == [0, 1, 2])
        ahead.cancelAll()
        await cloud.fail(-1, with: CloudError.changeTokenExpired)
        let again = try await ahead.next(since: nil)
        #expect(again?.number == 0)
        #expect(await cloud.asked.prefix(4) == [0, 1, 2, 0])
    }

    /// Requests cancelled by ``PagesAhead/cancelAll()`` ask for nothing more once the page
    /// they waited for arrives: the page after it is asked for once, by the new requests.
    @Test func cancelledRequestsAskForNothingMore() async throws {
        let cloud = Cloud(count: 5)
        await cloud.hold(1)
        var ahead = Self.pages(of: cloud)
        defer { ahead.cancelAll() }
        let first = try await ahead.next(since: nil)
        try await cloud.waitUntilAsked(1)
        ahead.cancelAll()
        await cloud.release(1)
        let second = try await ahead.next(since: first?.token)
        #expect(second?.number == 1)
        try await cloud.waitUntilAsked(3)
        let asked = await cloud.asked
        #expect(asked.filter { $0 == 1 }.count == 2)
        #expect(asked.filter { $0 == 2 }.count == 1)
    }
}
