import StrataCloud

/// The body of `fetchDatabaseChanges`.
public struct FetchDatabaseChangesRequest: Codable, Sendable, Hashable {
    /// The token of the last fetch; absent for every zone.
    public var since: CloudChangeToken?
    /// The zones whose first page the response carries when they changed
    /// (`CloudDatabase.fetchDatabaseChanges(since:firstPages:)`); absent for none.
    public var firstPages: [CloudZonePageRequest]?

    /// A request for the changes after `since`, with the first pages of `firstPages`' zones.
    public init(since: CloudChangeToken?, firstPages: [CloudZonePageRequest]? = nil) {
        self.since = since
        self.firstPages = firstPages
    }
}

/// The response of `fetchDatabaseChanges`.
public struct DatabaseChangesResponse: Codable, Sendable, Hashable {
    /// Zones with changes since the token.
    public var changedZones: [CloudZoneID]
    /// Zones deleted since the token.
    public var deletedZones: [CloudZoneID]
    /// Where the next fetch continues.
    public var token: CloudChangeToken
    /// The first pages the request asked for that the cloud gives, by zone name order;
    /// absent when there are none.
    public var firstPages: [ZoneFirstPage]?

    /// One zone's first page.
    public struct ZoneFirstPage: Codable, Sendable, Hashable {
        /// The zone.
        public var zone: CloudZoneID
        /// Its page.
        public var page: ZoneChangesResponse

        /// A zone's page.
        public init(zone: CloudZoneID, page: ZoneChangesResponse) {
            self.zone = zone
            self.page = page
        }
    }

    /// The wire form of `changes`.
    public init(_ changes: CloudDatabaseChanges) {
        changedZones = changes.changedZones
        deletedZones = changes.deletedZones
        token = changes.token
        firstPages =
            changes.firstPages.isEmpty
            ? nil
            : changes.firstPages.sorted { $0.key.description < $1.key.description }.map {
                ZoneFirstPage(zone: $0.key, page: ZoneChangesResponse($0.value))
            }
    }

    /// The changes this response describes. A zone listed twice keeps its first page.
    public var changes: CloudDatabaseChanges {
        var pages: [CloudZoneID: CloudZoneChanges] = [:]
        for first in firstPages ?? [] where pages[first.zone] == nil { pages[first.zone] = first.page.changes }
        return CloudDatabaseChanges(changedZones: changedZones, deletedZones: deletedZones, token: token, firstPages: pages)
    }
}

/// The body of `fetchZoneChanges`, and of each first page a `fetchDatabaseChanges` asks for:
/// the zone, the token of its last page (absent to start from the beginning) and the most
/// records one page holds.
public typealias FetchZoneChangesRequest = CloudZonePageRequest

/// The response of `fetchZoneChanges`: one page.
public struct ZoneChangesResponse: Codable, Sendable, Hashable {
    /// Records saved since the token, in their latest state.
    public var changed: [CloudRecord]
    /// Records deleted since the token.
    public var deleted: [CloudTombstone]
    /// Where the next page continues.
    public var token: CloudChangeToken
    /// Whether more changes wait.
    public var moreComing: Bool
    /// About how many changes wait after this page; absent from services that predate it, and
    /// then decoded as nil.
    public var remainingEstimate: Int?
    /// Where pages after the next one start (`CloudZoneChanges.followingTokens`); absent when
    /// none were planned.
    public var followingTokens: [CloudChangeToken]?

    /// The wire form of `changes`.
    public init(_ changes: CloudZoneChanges) {
        changed = changes.changed
        deleted = changes.deleted
        token = changes.token
        moreComing = changes.moreComing
        remainingEstimate = changes.remainingEstimate
        followingTokens = changes.followingTokens.isEmpty ? nil : changes.followingTokens
    }

    /// The page this response describes.
    public var changes: CloudZoneChanges {
        CloudZoneChanges(
            changed: changed, deleted: deleted, token: token, moreComing: moreComing, remainingEstimate: remainingEstimate,
            followingTokens: followingTokens ?? [])
    }
}
