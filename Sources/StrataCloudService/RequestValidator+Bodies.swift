import StrataCloud
import StrataCloudWire

/// The checks of each request body: every field, every count, against the configuration.
extension RequestValidator {
    func validate(_ body: ZonesRequest) throws {
        try items(body.zones.count, atMost: configuration.maximumZonesPerRequest)
        for (index, zone) in body.zones.enumerated() { try self.zone(zone, "zones[\(index)]") }
    }

    /// Item counts are ``StrataCloud/CloudLimits``'s: `limitExceeded`, which the
    /// engine answers by splitting.
    func validate(_ body: FetchRecordsRequest) throws(InvalidRequest) {
        for (index, id) in body.ids.enumerated() { try recordID(id, "ids[\(index)]") }
    }

    func validate(_ body: ModifyRecordsRequest) throws(InvalidRequest) {
        for (index, record) in body.saving.enumerated() { try self.record(record, "saving[\(index)]") }
        for (index, id) in body.deleting.enumerated() { try recordID(id, "deleting[\(index)]") }
    }

    /// At most `CloudZonePageRequest.maximumPerRequest` first pages (`limitExceeded`), each
    /// checked as a `fetchZoneChanges` body is (its `limit` bounded by ``pageLimit(_:)``).
    func validate(_ body: FetchDatabaseChangesRequest) throws {
        try token(body.since, "since")
        guard let pages = body.firstPages else { return }
        try items(pages.count, atMost: CloudZonePageRequest.maximumPerRequest)
        for (index, page) in pages.enumerated() {
            try zone(page.zone, "firstPages[\(index)].zone")
            try token(page.since, "firstPages[\(index)].since")
            try count(page.limit, atMost: .max, "firstPages[\(index)].limit", allowsZero: false)
            try count(page.plannedPages, atMost: .max, "firstPages[\(index)].plannedPages", allowsZero: true)
        }
    }

    /// A `limit` of at least 1 (``pageLimit(_:)`` bounds it), and `plannedPages` not below 0
    /// (more than `CloudZonePageRequest.maximumPlannedPages` plans that many, as a larger
    /// limit gets the largest page: what an engine asks for is its own setting).
    func validate(_ body: FetchZoneChangesRequest) throws(InvalidRequest) {
        try zone(body.zone, "zone")
        try token(body.since, "since")
        try count(body.limit, atMost: .max, "limit", allowsZero: false)
        try count(body.plannedPages, atMost: .max, "plannedPages", allowsZero: true)
    }

    /// The page size the backend is asked for: a validated `limit`, at most
    /// ``CloudServiceConfiguration/maximumFetchPageSize``. A larger limit gets pages of the
    /// maximum, with `moreComing`, as the store bounds its own pages: an engine's page size is
    /// its own setting, and one asking for more than an operator allows must still fetch (a
    /// permanent refusal stopped its fetches for good).
    func pageLimit(_ limit: Int) -> Int {
        min(limit, configuration.maximumFetchPageSize)
    }

    func validate(_ body: MissingAssetsRequest) throws {
        try items(body.hashes.count, atMost: configuration.maximumHashesPerRequest)
        for (index, hash) in body.hashes.enumerated() { try self.hash(hash, "hashes[\(index)]") }
    }

    func validate(_ body: UploadAssetsRequest) throws {
        try items(body.assets.count, atMost: configuration.maximumHashesPerRequest)
        for (index, asset) in body.assets.enumerated() { try self.asset(asset, "assets[\(index)]") }
        for (index, asset) in body.assets.enumerated() { try consistency(of: asset, "assets[\(index)]") }
    }

    func validate(_ body: FetchAssetRequest) throws(InvalidRequest) {
        try hash(body.hash, "hash")
    }

    func validate(_ body: SaveShareRequest) throws {
        try items(body.share.participants.count, atMost: configuration.maximumParticipantsPerShare)
        try body.share.checkWrappedKeys()
        try share(body.share, "share")
    }

    /// A public key is exactly 32 bytes: any other size is `invalidRequest` naming `key`.
    func validate(_ body: PublishPublicKeyRequest) throws(InvalidRequest) {
        guard body.key.count == CloudPublicKeyError.requiredSize else {
            throw InvalidRequest(field: "key", reason: CloudPublicKeyError.wrongSize(body.key.count).description)
        }
    }

    /// At most ``StrataCloud/CloudLimits``'s items per request (`limitExceeded`), each a name.
    func validate(_ body: PublicKeysRequest) throws {
        try items(body.users.count, atMost: configuration.limits.maximumItemsPerRequest)
        for (index, user) in body.users.enumerated() { try name(user, "users[\(index)]") }
    }

    /// A profile within the contract's bounds (`CloudUserProfile.validated()`): anything else
    /// is `invalidRequest` naming `displayName` or `email`.
    func validate(_ body: CloudUserProfile) throws(InvalidRequest) {
        do {
            _ = try body.validated()
        } catch {
            throw InvalidRequest(field: error.field, reason: error.reason)
        }
    }

    func validate(_ body: ShareRootRequest) throws(InvalidRequest) {
        try recordID(body.rootRecordID, "rootRecordID")
    }

    /// A URL of the document's shape (length, no NUL) that names no share a user could join
    /// (not a `strata-share://owner/zone/record` URL, percent-encoding that is not UTF-8,
    /// names over their bounds) is `unknownItem` (404), as for a share that does not exist:
    /// whether a string parses as a share URL is more than a schema can say. Its record ID is
    /// empty, since the URL's parts are not names the error body may carry.
    func validate(_ body: AcceptShareRequest) throws {
        let limit = Self.maximumShareURLLength(nameLength: configuration.maximumNameLength)
        let length = body.url.unicodeScalars.count
        guard length <= limit else {
            throw InvalidRequest(field: "url", reason: "\(length) characters; at most \(limit)")
        }
        try text(body.url, "url")
        guard let root = CloudShare.rootRecordID(fromURL: body.url), (try? recordID(root, "url")) != nil else {
            throw CloudError.unknownItem(CloudRecordID(name: "", zone: CloudZoneID(name: "", owner: "")))
        }
    }

    /// The longest share URL a service with names of `nameLength` characters accepts:
    /// 9,248 with the default 256.
    static func maximumShareURLLength(nameLength: Int) -> Int {
        nameLength * 12 * 3 + 32
    }

    /// A list over its cap: `limitExceeded`, as for records, since the client can split it.
    func items(_ count: Int, atMost maximum: Int) throws(CloudError) {
        guard count <= maximum else { throw .limitExceeded }
    }

    /// The authenticated user, from the token's `sub`: a name like any other.
    func validate(user: String) throws(InvalidRequest) {
        try name(user, "token.sub")
    }
}
