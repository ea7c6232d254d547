import StrataCloud

/// The body of `fetchDatabaseChanges`.
public struct FetchDatabaseChangesRequest: Codable, Sendable, Hashable {
    /// The token of the last fetch; absent for every zone.
    public var since: CloudChangeToken?

    /// A request for the changes after `since`.
    public init(since: CloudChangeToken?) {
        self.since = since
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

    /// The wire form of `changes`.
    public init(_ changes: CloudDatabaseChanges) {
        changedZones = changes.changedZones
        deletedZones = changes.deletedZones
        token = changes.token
    }

    /// The changes this response describes.
    public var changes: CloudDatabaseChanges {
        CloudDatabaseChanges(changedZones: changedZones, deletedZones: deletedZones, token: token)
    }
}

/// The body of `fetchZoneChanges`.
public struct FetchZoneChangesRequest: Codable, Sendable, Hashable {
    /// The zone.
    public var zone: CloudZoneID
    /// The token of the last page; absent to start from the beginning.
    public var since: CloudChangeToken?
    /// The most records one page holds.
    public var limit: Int

    /// A request for a page of `zone`'s changes.
    public init(zone: CloudZoneID, since: CloudChangeToken?, limit: Int) {
        self.zone = zone
        self.since = since
        self.limit = limit
    }
}

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

    /// The wire form of `changes`.
    public init(_ changes: CloudZoneChanges) {
        changed = changes.changed
        deleted = changes.deleted
        token = changes.token
        moreComing = changes.moreComing
        remainingEstimate = changes.remainingEstimate
    }

    /// The page this response describes.
    public var changes: CloudZoneChanges {
        CloudZoneChanges(
            changed: changed, deleted: deleted, token: token, moreComing: moreComing, remainingEstimate: remainingEstimate)
    }
}
