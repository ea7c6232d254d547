import StrataCloud
import StrataCloudWire

/// The checks of each request body: every field, every count, against the configuration.
extension RequestValidator {
    func validate(_ body: ZonesRequest) throws {
        try items(body.zones.count, atMost: configuration.maximumZonesPerRequest)
        for (index, zone) in body.zones.enumerated() { try self.zone(zone, "zones[\(index)]") }
    }

    /// Item counts are ``CloudService/checkLimits(items:saving:)``'s: `limitExceeded`, which the
    /// engine answers by splitting.
    func validate(_ body: FetchRecordsRequest) throws(InvalidRequest) {
        for (index, id) in body.ids.enumerated() { try recordID(id, "ids[\(index)]") }
    }

    func validate(_ body: ModifyRecordsRequest) throws(InvalidRequest) {
        for (index, record) in body.saving.enumerated() { try self.record(record, "saving[\(index)]") }
        for (index, id) in body.deleting.enumerated() { try recordID(id, "deleting[\(index)]") }
    }

    func validate(_ body: FetchDatabaseChangesRequest) throws(InvalidRequest) {
        try token(body.since, "since")
    }

    func validate(_ body: FetchZoneChangesRequest) throws(InvalidRequest) {
        try zone(body.zone, "zone")
        try token(body.since, "since")
        try count(body.limit, atMost: configuration.maximumFetchPageSize, "limit", allowsZero: false)
    }

    func validate(_ body: MissingAssetsRequest) throws {
        try items(body.hashes.count, atMost: configuration.maximumHashesPerRequest)
        for (index, hash) in body.hashes.enumerated() { try self.hash(hash, "hashes[\(index)]") }
    }

    func validate(_ body: UploadAssetsRequest) throws {
        try items(body.assets.count, atMost: configuration.maximumHashesPerRequest)
        for (index, asset) in body.assets.enumerated() { try self.asset(asset, "assets[\(index)]") }
    }

    func validate(_ body: FetchAssetRequest) throws(InvalidRequest) {
        try hash(body.hash, "hash")
    }

    func validate(_ body: SaveShareRequest) throws {
        try items(body.share.participants.count, atMost: configuration.maximumParticipantsPerShare)
        try share(body.share, "share")
    }

    func validate(_ body: ShareRootRequest) throws(InvalidRequest) {
        try recordID(body.rootRecordID, "rootRecordID")
    }

    func validate(_ body: AcceptShareRequest) throws(InvalidRequest) {
        // Three percent-encoded names and a prefix.
        let limit = configuration.maximumNameBytes * 9 + 32
        guard body.url.utf8.count <= limit else {
            throw InvalidRequest(field: "url", reason: "\(body.url.utf8.count) bytes; at most \(limit)")
        }
        try text(body.url, "url")
        if let root = CloudShare.rootRecordID(fromURL: body.url) { try recordID(root, "url") }
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
