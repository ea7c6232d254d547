import StrataCloud

/// The pages of one zone asked for ahead of the one being applied, in order, two at most.
///
/// A page's token, which the next request needs, is known as soon as the page arrives, long
/// before its records are read and applied. So the page after the next one is asked for the
/// moment the next one arrives: while one page is applied, the next is read and the one after
/// it travels. Asking only when the loop came round to a page made every request wait for the
/// apply before it, and every page for its own request in turn.
///
/// Two pages ahead bounds what waits in memory to three pages (the one applied included), and
/// a fetch that ends asks for nothing past its last page: the request after a page that has no
/// more coming is never made.
///
/// A cloud that plans where later pages start (``CloudZoneChanges/followingTokens``) lets the
/// two pages ahead travel together: the page two after one is asked for from the start that
/// page planned, as soon as it arrived, rather than once the page between arrived. On a long
/// link a page then waits for one round trip in two, not each for its own in turn.
struct PagesAhead<Page: Sendable> {
    /// Asks the cloud for the page after `token` (nil: from the start).
    typealias Fetch = @Sendable (_ since: CloudChangeToken?) async throws -> Page
    /// The token the page after `page` is asked from; nil when the cloud said no more come.
    typealias Continuation = @Sendable (_ page: Page) -> CloudChangeToken?
    /// Where pages after the one after `page` start, as the cloud planned them: the first
    /// starts the page two after it.
    typealias Planned = @Sendable (_ page: Page) -> [CloudChangeToken]
    /// Ends the work a page not taken still does (its records' reading).
    typealias Discard = @Sendable (_ page: Page) -> Void

    /// How many pages are asked for ahead of the one taken.
    static var depth: Int { 2 }

    /// How many starts each page asks the cloud to plan: a page's request is made when the
    /// page `depth` before it arrived, from the start that page planned.
    static var plannedPages: Int { depth - 1 }

    private let fetch: Fetch
    private let fetchPlanned: Fetch
    private let continuation: Continuation
    private let planned: Planned
    private let discard: Discard
    /// Requests in the order their pages are taken; each one after the first starts from the
    /// page before it once that page arrived, or from an earlier page's planned start once
    /// that one arrived, and is nil when an earlier page was the last.
    private var requests: [Task<Page?, any Error>] = []

    /// - Parameters:
    ///   - fetchPlanned: asks for a page from a start an earlier page planned (`fetch` when nil).
    ///   - planned: the starts a page planned (none when nil).
    init(
        fetch: @escaping Fetch, fetchPlanned: Fetch? = nil, continuation: @escaping Continuation, planned: Planned? = nil,
        discard: @escaping Discard = { _ in }
    ) {
        self.fetch = fetch
        self.fetchPlanned = fetchPlanned ?? fetch
        self.continuation = continuation
        self.planned = planned ?? { _ in [] }
        self.discard = discard
    }

    /// Begins with a page already here (a first page that came with another answer).
    mutating func start(with page: Page) {
        cancelAll()
        requests = [Task { page }]
    }

    /// The next page: asked from `token` when nothing is asked for ahead (the first page, or
    /// after ``cancelAll()``), otherwise the one asked for after the page taken before. The
    /// page after it is asked for as soon as it arrives.
    ///
    /// - Returns: nil after a page that had no more coming (the caller stops at such a page).
    /// - Throws: the request's error (the cloud's, or `CancellationError`).
    mutating func next(since token: CloudChangeToken?) async throws -> Page? {
        if requests.isEmpty {
            let fetch = self.fetch
            requests = [Task { try await fetch(token) }]
        }
        // The one taken now, and `depth` behind it.
        while requests.count < Self.depth + 1 {
            let (fetch, fetchPlanned, continuation, planned) = (self.fetch, self.fetchPlanned, self.continuation, self.planned)
            let earlier = requests
            requests.append(
                Task {
                    // The earliest page waiting that knows where this one starts: one that
                    // planned it, or the one just before it. Pages arrive about in order, so
                    // the earliest is waited for first.
                    for (index, request) in earlier.enumerated() {
                        guard let page = try await request.value, let next = continuation(page) else { return nil }
                        let distance = earlier.count - index
                        if distance == 1 {
                            try Task.checkCancellation()
                            return try await fetch(next)
                        }
                        let starts = planned(page)
                        if starts.count >= distance - 1 {
                            try Task.checkCancellation()
                            return try await fetchPlanned(starts[distance - 2])
                        }
                    }
                    return nil
                })
        }
        let request = requests.removeFirst()
        return try await withTaskCancellationHandler {
            try await request.value
        } onCancel: {
            request.cancel()
        }
    }

    /// How many requests wait behind the page taken last (tests check the bound).
    var count: Int { requests.count }

    /// Cancels every request ahead, and discards the pages that arrived already or arrive
    /// still (a fetch that ends early leaves none of them reading); the next ``next(since:)``
    /// asks from its token again.
    mutating func cancelAll() {
        let discard = self.discard
        for request in requests {
            request.cancel()
            // A request that finished before the cancel holds a page that arrived; one still
            // travelling may return its page anyway (a cloud need not stop on cancel).
            Task { if let page = try? await request.value { discard(page) } }
        }
        requests = []
    }
}

extension PagesAhead where Page == FetchedPage {
    /// The pages of `zone`, `pageSize` records at most each, each planning the start of the
    /// pages ``plannedPages`` after the next one.
    init(zone: CloudZoneID, cloud: any CloudDatabase, pageSize: Int) {
        let planning = Self.plannedPages
        self.init(
            fetch: { token in
                FetchedPage(
                    try await cloud.fetchArrivingZoneChanges(zone, since: token, limit: pageSize, plannedPages: planning),
                    fromPlannedStart: false)
            },
            fetchPlanned: { token in
                FetchedPage(
                    try await cloud.fetchArrivingZoneChanges(zone, since: token, limit: pageSize, plannedPages: planning),
                    fromPlannedStart: true)
            },
            continuation: { page in page.moreComing ? page.token : nil },
            planned: { page in page.moreComing ? page.followingTokens : [] },
            discard: { page in page.reading.cancel() })
    }
}
