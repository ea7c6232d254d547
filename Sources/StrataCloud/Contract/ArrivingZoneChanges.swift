/// A page of one zone's changes as it arrives: where the next page starts is known before the
/// page's records are read.
///
/// A zone's pages form a chain, each asked for from the token of the one before. Reading a
/// page's records (and opening them, with end-to-end encryption) before asking for the next
/// put that work on the chain for every page; with the token known first, the next page
/// travels while this one is read (``CloudDatabase/fetchArrivingZoneChanges(_:since:limit:)``).
public struct ArrivingZoneChanges: Sendable {
    /// Where the next page continues: ``CloudZoneChanges/token`` of the page.
    public var token: CloudChangeToken
    /// Whether more changes wait: ``CloudZoneChanges/moreComing`` of the page.
    public var moreComing: Bool
    /// Where pages after the next one start: ``CloudZoneChanges/followingTokens`` of the page.
    public var followingTokens: [CloudChangeToken]
    private let read: @Sendable () async throws -> CloudZoneChanges

    /// A page whose `token`, `moreComing` and `followingTokens` are known, and whose changes
    /// `read` reads; `read` must answer the same three.
    public init(
        token: CloudChangeToken, moreComing: Bool, followingTokens: [CloudChangeToken] = [],
        read: @escaping @Sendable () async throws -> CloudZoneChanges
    ) {
        self.token = token
        self.moreComing = moreComing
        self.followingTokens = followingTokens
        self.read = read
    }

    /// A page read whole already.
    public init(_ page: CloudZoneChanges) {
        self.init(token: page.token, moreComing: page.moreComing, followingTokens: page.followingTokens) { page }
    }

    /// The page's changes, read now: the errors ``CloudDatabase/fetchZoneChanges(_:since:limit:)``
    /// throws for a page that arrived and does not read.
    public func changes() async throws -> CloudZoneChanges {
        try await read()
    }
}

extension CloudDatabase {
    /// Answers ``fetchZoneChanges(_:since:limit:)``'s page, read whole before it is handed
    /// over: a cloud that reads its pages in one step has nothing to hand over sooner.
    public func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        ArrivingZoneChanges(try await fetchZoneChanges(zone, since: token, limit: limit))
    }

    /// Answers ``fetchArrivingZoneChanges(_:since:limit:)``'s page, planning nothing: a cloud
    /// that does not plan leaves its pages to be asked for one after another.
    public func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        var page = try await fetchArrivingZoneChanges(zone, since: token, limit: limit)
        page.followingTokens = []
        return page
    }
}
