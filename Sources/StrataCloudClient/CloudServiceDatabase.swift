import StrataCloud
import StrataCloudWire

/// One database of a ``CloudServiceContainer``: each call is one `POST /v1/{scope}/{operation}`.
struct CloudServiceDatabase: CloudDatabase {
    let transport: CloudServiceTransport
    let scope: CloudDatabaseScope

    private func call<Response: Decodable>(
        _ operation: CloudOperation, _ body: some Encodable, as _: Response.Type = Response.self
    ) async throws -> Response {
        try await transport.post(CloudRoute.database(scope, operation), body)
    }

    func saveZones(_ zones: [CloudZoneID]) async throws {
        _ = try await call(.saveZones, ZonesRequest(zones: zones), as: EmptyResponse.self)
    }

    func deleteZones(_ zones: [CloudZoneID]) async throws {
        _ = try await call(.deleteZones, ZonesRequest(zones: zones), as: EmptyResponse.self)
    }

    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        let response = try await call(.fetchRecords, FetchRecordsRequest(ids: ids), as: FetchRecordsResponse.self)
        return try Self.decoded { () throws(CloudWireError) in try RecordResult.map(response.results) }
    }

    func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
        // The cloud stores what is sent: an accepted save's answer needs only its new tag.
        let response = try await call(
            .modifyRecords, ModifyRecordsRequest(saving: saving, deleting: deleting, answer: .changeTags),
            as: ModifyRecordsResponse.self)
        return try Self.decoded { () throws(CloudWireError) in try response.modifyResult(saving: saving) }
    }

    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        try await call(.fetchDatabaseChanges, FetchDatabaseChangesRequest(since: token), as: DatabaseChangesResponse.self).changes
    }

    func fetchDatabaseChanges(since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]) async throws -> CloudDatabaseChanges {
        let request = FetchDatabaseChangesRequest(since: token, firstPages: firstPages.isEmpty ? nil : firstPages)
        return try await call(.fetchDatabaseChanges, request, as: DatabaseChangesResponse.self).changes
    }

    func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        try await fetchArrivingZoneChanges(zone, since: token, limit: limit).changes()
    }

    /// Hands the page over once its body is here and its token read, before its records
    /// are: they are read when ``ArrivingZoneChanges/changes()`` is called.
    func fetchArrivingZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> ArrivingZoneChanges {
        try await fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: 0)
    }

    /// Asks the service to plan `plannedPages` starts (sent only when not 0; the service
    /// refuses a number below 0).
    func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        let request = FetchZoneChangesRequest(zone: zone, since: token, limit: limit, plannedPages: plannedPages)
        let body = try await transport.postForBody(CloudRoute.database(scope, .fetchZoneChanges), request)
        guard let head = ZoneChangesResponse.head(of: body) else {
            return ArrivingZoneChanges(try CloudServiceTransport.decoded(ZoneChangesResponse.self, from: body).changes)
        }
        return ArrivingZoneChanges(token: head.token, moreComing: head.moreComing, followingTokens: head.followingTokens) {
            let page = try CloudServiceTransport.decoded(ZoneChangesResponse.self, from: body).changes
            // Read twice, by two readers: they must agree, or the next page was asked for
            // from a token this page does not have.
            guard page.token == head.token, page.moreComing == head.moreComing else { throw CloudError.networkFailure }
            return page
        }
    }

    func missingAssets(_ hashes: [String]) async throws -> Set<String> {
        Set(try await call(.missingAssets, MissingAssetsRequest(hashes: hashes), as: MissingAssetsResponse.self).missing)
    }

    func uploadAssets(_ assets: [CloudAsset]) async throws {
        _ = try await call(.uploadAssets, UploadAssetsRequest(assets: assets), as: EmptyResponse.self)
    }

    func fetchAsset(_ hash: String) async throws -> CloudAsset {
        try await call(.fetchAsset, FetchAssetRequest(hash: hash))
    }

    func saveShare(_ share: CloudShare) async throws -> CloudShare {
        try await call(.saveShare, SaveShareRequest(share: share))
    }

    func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare {
        try await call(.fetchShare, ShareRootRequest(rootRecordID: rootRecordID))
    }

    func deleteShare(rootRecordID: CloudRecordID) async throws {
        _ = try await call(.deleteShare, ShareRootRequest(rootRecordID: rootRecordID), as: EmptyResponse.self)
    }

    /// Per-item results whose errors do not decode mean the two ends disagree on the format.
    private static func decoded<T>(_ body: () throws(CloudWireError) -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw CloudServiceClientError.unexpectedResponse(status: 200, message: "\(error)")
        }
    }
}
