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
/// pages ahead travel together: a page asked for from its token plans the starts of the pages
/// after the next one, and those are asked for from them as soon as it arrived, each beside
/// the one before, rather than once the page before arrived. On a long link a round trip is
/// then waited for once for several pages, not once each.
///
/// A plan holds only for the pages that follow the page asked from its own page's token: a
/// start is the position `limit` changes after the start before it, as the cloud saw them, and
/// changes saved since only move to the feed's end, so each of those pages reaches the next
/// one's start or past it. Starts from two plans do not fit together: a page asked from an
/// earlier plan can end before where a later plan, made from another page's end, put the next
/// start, and the changes between would be skipped (an outside review found it, with part of a
/// page saved again during the fetch). So the pages go in runs: one asked from the token of the
/// page before it, then the starts of that page's plan (``plannedPages`` of them), then again
/// one from a token. A plan shorter than that (the zone's end, or a cloud that plans less)
/// leaves the rest of the run to be asked page after page, from tokens.
///
/// Nothing is asked for past a page with no more coming, except from a start a cloud planned:
/// a page before it said changes followed.
struct PagesAhead<Page: Sendable> {
    /// Asks the cloud for the page after `token` (nil: from the start).
    typealias Fetch = @Sendable (_ since: CloudChangeToken?) async throws -> Page
    /// Asks the cloud for the page from a planned start; with `planning`, the page plans the
    /// starts of the next run (it is the last of its run).
    typealias FetchPlanned = @Sendable (_ start: CloudChangeToken, _ planning: Bool) async throws -> Page
    /// The token the page after `page` is asked from; nil when the cloud said no more come.
    typealias Continuation = @Sendable (_ page: Page) -> CloudChangeToken?
    /// Where pages after the one after `page` start, as the cloud planned them: the first
    /// starts the page two after it.
    typealias Planned = @Sendable (_ page: Page) -> [CloudChangeToken]
    /// Ends the work a page not taken still does (its records' reading).
    typealias Discard = @Sendable (_ page: Page) -> Void

    /// How many pages are asked for ahead of the one taken.
    static var depth: Int { 2 }

    /// How many starts a page asked for from its token asks the cloud to plan: the pages of a
    /// run after the one asked from a token.
    static var plannedPages: Int { CloudZonePageRequest.maximumPlannedPages }

    /// Where a request after another starts.
    private enum Source {
        /// From the token of the page `before` (the request before it).
        case token(after: Task<Page?, any Error>)
        /// From start `index` of the plan of the page `origin`, whose next page was asked
        /// from its token; from the token of the page before it when the plan is shorter.
        case planned(origin: Task<Page?, any Error>, index: Int)
    }

    private let fetch: Fetch
    private let fetchPlanned: FetchPlanned
    private let continuation: Continuation
    private let planned: Planned
    private let discard: Discard
    /// Requests in the order their pages are taken; each is nil when a page before it was the
    /// last.
    private var requests: [Task<Page?, any Error>] = []
    /// Where the last request's page starts: what the next one's start follows from; nil for
    /// the caller's token, or a page already here.
    private var lastSource: Source?

    /// - Parameters:
    ///   - fetchPlanned: asks for a page from a start an earlier page planned (`fetch` when nil).
    ///   - planned: the starts a page planned (none when nil).
    init(
        fetch: @escaping Fetch, fetchPlanned: FetchPlanned? = nil, continuation: @escaping Continuation, planned: Planned? = nil,
        discard: @escaping Discard = { _ in }
    ) {
        self.fetch = fetch
        self.fetchPlanned = fetchPlanned ?? { start, _ in try await fetch(start) }
        self.continuation = continuation
        self.planned = planned ?? { _ in [] }
        self.discard = discard
    }

    /// Begins with a page already here (a first page that came with another answer).
    mutating func start(with page: Page) {
        cancelAll()
        requests = [Task { page }]
        lastSource = nil
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
            lastSource = nil
        }
        // The one taken now, and `depth` behind it.
        while requests.count < Self.depth + 1, let previous = requests.last {
            let (fetch, fetchPlanned, continuation, planned) = (self.fetch, self.fetchPlanned, self.continuation, self.planned)
            let source: Source =
                switch lastSource {
                case nil: .token(after: previous)
                case .token(let before)?: .planned(origin: before, index: 0)
                case .planned(let origin, let index)?:
                    index + 1 < Self.plannedPages ? .planned(origin: origin, index: index + 1) : .token(after: previous)
                }
            lastSource = source
            /// The page after `before`, from its token.
            @Sendable func following(_ before: Task<Page?, any Error>) async throws -> Page? {
                guard let page = try await before.value, let token = continuation(page) else { return nil }
                try Task.checkCancellation()
                return try await fetch(token)
            }
            switch source {
            case .token(let before):
                requests.append(Task { try await following(before) })
            case .planned(let origin, let index):
                requests.append(
                    Task {
                        guard let page = try await origin.value, continuation(page) != nil else { return nil }
                        let starts = planned(page)
                        guard index < starts.count else { return try await following(previous) }
                        try Task.checkCancellation()
                        // The last of a run plans the next run: its page is the one the next
                        // run's first page is asked after, from its token.
                        return try await fetchPlanned(starts[index], index + 1 == Self.plannedPages)
                    })
            }
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
        lastSource = nil
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
    /// The pages of `zone`, `pageSize` records at most each. The page before each run's first
    /// (asked from its token) plans the run: the first page, a page asked from a token, and the
    /// last page of a run; the other pages of a run plan nothing (their plans would not fit).
    init(zone: CloudZoneID, cloud: any CloudDatabase, pageSize: Int) {
        let planning = Self.plannedPages
        self.init(
            fetch: { token in
                FetchedPage(
                    try await cloud.fetchArrivingZoneChanges(zone, since: token, limit: pageSize, plannedPages: planning))
            },
            fetchPlanned: { start, plansNextRun in
                FetchedPage(
                    try await cloud.fetchArrivingZoneChanges(
                        zone, since: start, limit: pageSize, plannedPages: plansNextRun ? planning : 0),
                    plannedStart: start)
            },
            continuation: { page in page.moreComing ? page.token : nil },
            planned: { page in page.moreComing ? page.followingTokens : [] },
            discard: { page in page.reading.cancel() })
    }
}
