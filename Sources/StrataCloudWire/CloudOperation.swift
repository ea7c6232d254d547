/// The operations of a cloud database, each a route `POST /v1/{scope}/{operation}` with its own
/// request and response body.
public enum CloudOperation: String, Sendable, Hashable, CaseIterable {
    /// ``ZonesRequest`` → ``EmptyResponse``.
    case saveZones
    /// ``ZonesRequest`` → ``EmptyResponse``.
    case deleteZones
    /// ``FetchRecordsRequest`` → ``FetchRecordsResponse``.
    case fetchRecords
    /// ``ModifyRecordsRequest`` → ``ModifyRecordsResponse``.
    case modifyRecords
    /// ``FetchDatabaseChangesRequest`` → ``DatabaseChangesResponse``.
    case fetchDatabaseChanges
    /// ``FetchZoneChangesRequest`` → ``ZoneChangesResponse``.
    case fetchZoneChanges
    /// ``MissingAssetsRequest`` → ``MissingAssetsResponse``.
    case missingAssets
    /// ``UploadAssetsRequest`` → ``EmptyResponse``.
    case uploadAssets
    /// ``FetchAssetRequest`` → `CloudAsset`.
    case fetchAsset
    /// ``SaveShareRequest`` → `CloudShare`.
    case saveShare
    /// ``ShareRootRequest`` → `CloudShare`.
    case fetchShare
    /// ``ShareRootRequest`` → ``EmptyResponse``.
    case deleteShare
}
