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

        init(count: Int) { self.count = count }

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
            return Page(number: number, moreComing: number < count - 1)
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
            continuation: { page in page.moreComing ? page.token : nil })
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
