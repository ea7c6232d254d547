/// One database of a ``CloudContainer``: the private one (the user's own zones) or the shared
/// one (zones other users shared with this user).
///
/// Every call may throw a whole-request ``CloudError`` (``CloudError/isTransient`` tells which
/// ones a retry can fix). Calls are independent: a cloud holds no per-client session state.
public protocol CloudDatabase: Sendable {
    /// Which database of the container this is.
    var scope: CloudDatabaseScope { get }

    /// Creates zones; saving a zone that exists is not an error.
    func saveZones(_ zones: [CloudZoneID]) async throws
    /// Deletes zones with all their records; deleting a missing zone is not an error.
    func deleteZones(_ zones: [CloudZoneID]) async throws

    /// The records with these ids, each either found or failed (``CloudError/unknownItem(_:)``,
    /// ``CloudError/zoneNotFound(_:)``). Over ``CloudLimits/maximumItemsPerRequest`` ids: throws
    /// ``CloudError/limitExceeded``.
    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>]

    /// Saves and deletes in one call, atomic per zone: when one operation in a zone fails, every
    /// other operation in that zone fails with ``CloudError/batchRequestFailed(_:)`` and the zone
    /// is left unchanged. Each save is checked against the record's change tag, and a save of a
    /// deleted record against the field versions its tombstone kept: one carrying none newer
    /// fails with ``CloudError/supersededByDelete(_:)``.
    ///
    /// - Throws: ``CloudError/limitExceeded`` when the request has more than
    ///   ``CloudLimits/maximumItemsPerRequest`` items or ``CloudLimits/maximumBytesPerRequest``
    ///   bytes, before anything is applied; transient errors.
    func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult

    /// The zones that changed or were deleted since `token` (nil: every zone).
    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges

    /// The zones that changed or were deleted since `token`, as
    /// ``fetchDatabaseChanges(since:)`` answers, and with them the first page of each zone in
    /// `firstPages` that changed, as ``fetchZoneChanges(_:since:limit:)`` would answer it,
    /// read at the same moment (``CloudDatabaseChanges/firstPages``): a device that follows a
    /// zone gets a small change in one request instead of two, one after the other.
    ///
    /// A page is an offer, not a promise. A zone that did not change gets none, and neither
    /// does one whose page the cloud cannot give (its token expired, the zone is gone): the
    /// caller fetches those as usual and meets the error there. A cloud that does not offer
    /// pages (the default implementation) answers as ``fetchDatabaseChanges(since:)``. A zone
    /// asked for twice is read once, from its first request.
    ///
    /// - Throws: ``CloudError/limitExceeded`` for more than
    ///   ``CloudZonePageRequest/maximumPerRequest`` pages; what
    ///   ``fetchDatabaseChanges(since:)`` throws.
    func fetchDatabaseChanges(since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]) async throws -> CloudDatabaseChanges

    /// A page of a zone's changes since `token` (nil: from the start), at most `limit` records.
    /// Deletions come as tombstones.
    ///
    /// - Throws: ``CloudError/changeTokenExpired`` when `token` is older than the deletions the
    ///   cloud still remembers; ``CloudError/zoneNotFound(_:)``.
    func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges

    /// The page ``fetchZoneChanges(_:since:limit:)`` answers, handed over as soon as its
    /// token and whether more come are known, before its records are read: a sync engine asks
    /// for the next page meanwhile. The default implementation reads the page whole first.
    ///
    /// - Throws: what ``fetchZoneChanges(_:since:limit:)`` throws before the page arrives;
    ///   ``ArrivingZoneChanges/changes()`` throws the rest.
    func fetchArrivingZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> ArrivingZoneChanges

    /// The page ``fetchArrivingZoneChanges(_:since:limit:)`` answers, with where up to
    /// `plannedPages` of the pages after the next one start
    /// (``ArrivingZoneChanges/followingTokens``): a sync engine asks for those pages together
    /// instead of each after the one before, so a long link's round trip is waited for once
    /// for several pages. The default implementation plans none; so does a zone of the shared
    /// database (what a participant sees of it changes with their access).
    ///
    /// - Parameters:
    ///   - zone: the zone.
    ///   - token: where the page starts: a page's token or a planned start; nil from the
    ///     beginning.
    ///   - limit: the most changes the page holds.
    ///   - plannedPages: how many starts to plan, 0 to
    ///     ``CloudZonePageRequest/maximumPlannedPages`` (a larger number counts as that; a
    ///     smaller one plans none, and the service refuses it as an invalid `plannedPages`).
    /// - Throws: what ``fetchArrivingZoneChanges(_:since:limit:)`` throws.
    func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws -> ArrivingZoneChanges

    /// Which of these asset hashes the cloud does not hold yet.
    func missingAssets(_ hashes: [String]) async throws -> Set<String>
    /// Stores assets; an asset already held is skipped. The cloud checks each chunk's CRC and
    /// the whole content's size.
    func uploadAssets(_ assets: [CloudAsset]) async throws
    /// An asset's content.
    ///
    /// - Throws: ``CloudError/assetNotFound(_:)`` when the cloud does not hold `hash`.
    func fetchAsset(_ hash: String) async throws -> CloudAsset

    /// Creates or updates the share of a root record: its title, public permission and
    /// participants. Only the owner, through the private database, may; the owner stays a
    /// participant whatever `share` lists. Returns the share as stored, with its change tag.
    ///
    /// - Throws: ``CloudError/permissionFailure(_:)`` for anyone but the owner;
    ///   ``CloudError/unknownItem(_:)`` when the root does not exist.
    func saveShare(_ share: CloudShare) async throws -> CloudShare

    /// The share of a root: for its owner (private database) or a participant who accepted
    /// (shared database).
    ///
    /// - Throws: ``CloudError/unknownItem(_:)`` when the root is not shared, or not with this user.
    func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare

    /// Ends a share. The owner (private database) ends it for everyone: the records stay in
    /// the owner's zone and leave every participant's shared database. A participant (shared
    /// database) leaves it, for themselves only.
    func deleteShare(rootRecordID: CloudRecordID) async throws
}

/// Which of a container's two databases.
public enum CloudDatabaseScope: String, Hashable, Sendable, Codable {
    case `private`
    case shared
}

/// The outcome of ``CloudDatabase/modifyRecords(saving:deleting:)``, per item.
public struct CloudModifyResult: Sendable {
    /// Each saved record as the server now holds it (with its new change tag), or why not.
    public var saveResults: [CloudRecordID: Result<CloudRecord, CloudError>]
    /// Each delete's outcome. Deleting a record the server does not hold succeeds.
    public var deleteResults: [CloudRecordID: Result<Void, CloudError>]

    /// A result from per-item outcomes.
    public init(
        saveResults: [CloudRecordID: Result<CloudRecord, CloudError>] = [:],
        deleteResults: [CloudRecordID: Result<Void, CloudError>] = [:]
    ) {
        self.saveResults = saveResults
        self.deleteResults = deleteResults
    }
}

extension CloudDatabase {
    /// Offers no pages: the database changes alone.
    public func fetchDatabaseChanges(
        since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]
    ) async throws -> CloudDatabaseChanges {
        guard firstPages.count <= CloudZonePageRequest.maximumPerRequest else { throw CloudError.limitExceeded }
        return try await fetchDatabaseChanges(since: token)
    }
}

/// A database's changed zones since a token.
public struct CloudDatabaseChanges: Sendable {
    /// Zones with changes since the token.
    public var changedZones: [CloudZoneID]
    /// Zones deleted since the token.
    public var deletedZones: [CloudZoneID]
    /// Where the next fetch continues.
    public var token: CloudChangeToken
    /// The first page of changed zones asked for with
    /// ``CloudDatabase/fetchDatabaseChanges(since:firstPages:)``, each from the token it was
    /// asked from; empty from ``CloudDatabase/fetchDatabaseChanges(since:)``.
    public var firstPages: [CloudZoneID: CloudZoneChanges]

    /// A result from its parts.
    public init(
        changedZones: [CloudZoneID], deletedZones: [CloudZoneID], token: CloudChangeToken,
        firstPages: [CloudZoneID: CloudZoneChanges] = [:]
    ) {
        self.changedZones = changedZones
        self.deletedZones = deletedZones
        self.token = token
        self.firstPages = firstPages
    }
}

/// A zone's first page asked for beside a database's changes
/// (``CloudDatabase/fetchDatabaseChanges(since:firstPages:)``): what
/// ``CloudDatabase/fetchZoneChanges(_:since:limit:)`` takes.
public struct CloudZonePageRequest: Hashable, Sendable, Codable {
    /// The most pages one request asks for: each is a zone's page read in the same request.
    public static let maximumPerRequest = 8

    /// The zone.
    public var zone: CloudZoneID
    /// The token of the zone's last page; nil to start from the beginning.
    public var since: CloudChangeToken?
    /// The most changes the page holds.
    public var limit: Int
    /// How many pages after the next one the cloud plans the starts of
    /// (``CloudZoneChanges/followingTokens``); 0 plans none. Sent only when not 0.
    public var plannedPages: Int

    /// The most starts a page plans: as many pages as a sync engine asks for at once.
    public static let maximumPlannedPages = 4

    /// A request for `zone`'s first page after `since`.
    public init(zone: CloudZoneID, since: CloudChangeToken?, limit: Int, plannedPages: Int = 0) {
        self.zone = zone
        self.since = since
        self.limit = limit
        self.plannedPages = plannedPages
    }

    /// `plannedPages` brought into 0 ... ``maximumPlannedPages``.
    public var boundedPlannedPages: Int { Self.bounded(plannedPages: plannedPages) }

    /// A number of planned pages brought into 0 ... ``maximumPlannedPages``: what a cloud plans
    /// when asked for it.
    public static func bounded(plannedPages: Int) -> Int { min(max(0, plannedPages), maximumPlannedPages) }

    private enum CodingKeys: String, CodingKey {
        case zone, since, limit, plannedPages
    }

    /// Decodes the fields; a limit or a number of planned pages that is a number but not a
    /// whole one is an error naming its field.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        zone = try container.decode(CloudZoneID.self, forKey: .zone)
        since = try container.decodeIfPresent(CloudChangeToken.self, forKey: .since)
        limit = try container.decodeWholeNumber(Int.self, forKey: .limit)
        plannedPages = try container.contains(.plannedPages) ? container.decodeWholeNumber(Int.self, forKey: .plannedPages) : 0
    }

    /// Encodes the fields, `plannedPages` only when not 0: a request that plans nothing reads
    /// as it did before planning existed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(zone, forKey: .zone)
        try container.encodeIfPresent(since, forKey: .since)
        try container.encode(limit, forKey: .limit)
        if plannedPages != 0 { try container.encode(plannedPages, forKey: .plannedPages) }
    }
}

/// A page of one zone's changes.
public struct CloudZoneChanges: Sendable {
    /// Records saved since the token, each in its latest state, in the order of their last save.
    public var changed: [CloudRecord]
    /// Records deleted since the token.
    public var deleted: [CloudTombstone]
    /// Where the next fetch continues; persist it with the changes it covers.
    public var token: CloudChangeToken
    /// Whether more changes wait: fetch again from ``token``.
    public var moreComing: Bool
    /// About how many changes (records and tombstones) wait after this page: 0 when
    /// ``moreComing`` is false, otherwise at least 1 and usually an upper bound (a record
    /// saved twice since the token may count twice). Nil from a cloud that does not say; a
    /// sync engine shows it as progress, and never relies on it.
    public var remainingEstimate: Int?
    /// Where pages after the next one start, as the cloud planned them when it read this page
    /// (asked for with `plannedPages`): the page fetched from token *i* is the one *i* + 2
    /// after this, fetched with the same limit. Empty when more do not come, or none were
    /// asked for or planned.
    ///
    /// The starts hold for the pages of one plan: the page after this one fetched from
    /// ``token``, then those fetched from these starts in order. A change made after the
    /// planning moves to the end of the zone's feed, so each of those pages reaches the next
    /// one's start or past it, never stops short: no change falls between them. A page that
    /// reached past the next start overlaps it, and the two may have been read at different
    /// moments; a reader that applies pages in order should apply a page from a planned start
    /// only when the page before it ended there (its token is the start), and otherwise go on
    /// from that page's token. Starts from two plans do not fit together: a page fetched from
    /// one plan can stop short of a start another page planned.
    public var followingTokens: [CloudChangeToken]

    /// A page from its parts.
    public init(
        changed: [CloudRecord], deleted: [CloudTombstone], token: CloudChangeToken, moreComing: Bool, remainingEstimate: Int? = nil,
        followingTokens: [CloudChangeToken] = []
    ) {
        self.changed = changed
        self.deleted = deleted
        self.token = token
        self.moreComing = moreComing
        self.remainingEstimate = remainingEstimate
        self.followingTokens = followingTokens
    }
}

/// A deleted record, as a change feed reports it.
public struct CloudTombstone: Hashable, Sendable, Codable {
    /// The deleted record.
    public var id: CloudRecordID
    /// Its record type.
    public var type: String

    /// A tombstone from its parts.
    public init(id: CloudRecordID, type: String) {
        self.id = id
        self.type = type
    }
}
