/// Every failure a cloud reports, with the codes CloudKit uses so their meaning carries over.
///
/// Whole-request failures are thrown; per-item failures of a modify call come back in
/// ``CloudModifyResult``.
public enum CloudError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The save carried a stale change tag, or no tag over an existing record. Carries the
    /// server's current record, to merge and resend.
    case serverRecordChanged(CloudRecord)
    /// The zone does not exist (never created, or deleted).
    case zoneNotFound(CloudZoneID)
    /// The record does not exist: a save with a change tag of a deleted record, or a delete or
    /// fetch of a record the server does not hold.
    case unknownItem(CloudRecordID)
    /// The record was deleted after the cloud held every field version this save carries: a
    /// save the cloud applied before the delete, sent again (its answer was lost). The delete
    /// stands, as it would have had the first answer arrived; a save carrying an edit newer
    /// than what the delete removed is not refused so.
    case supersededByDelete(CloudRecordID)
    /// The cloud holds no asset with this content hash.
    case assetNotFound(String)
    /// An uploaded asset's content does not match its description (sizes, checksums).
    case invalidAsset(String, reason: String)
    /// A save whose parent is missing, or a delete of a parent whose children stay.
    case referenceViolation(CloudRecordID)
    /// The user may not do this (for example, a read-only participant's save).
    case permissionFailure(CloudRecordID?)
    /// Another operation in the same zone failed, so this one was not applied.
    case batchRequestFailed(CloudRecordID)
    /// The request has more items or bytes than the cloud accepts; split it and retry.
    case limitExceeded
    /// The user's storage is full; nothing is wrong with the records.
    case quotaExceeded
    /// The change token is older than the cloud keeps deletions for; fetch from scratch.
    case changeTokenExpired
    /// No signed-in user, or the account is not available.
    case notAuthenticated
    /// The request or its response was lost; the change may or may not have landed.
    case networkFailure
    /// The service is down for now; retry after the delay when one is given.
    case serviceUnavailable(retryAfter: Duration?)
    /// Too many requests; retry after the delay when one is given.
    case requestRateLimited(retryAfter: Duration?)

    /// Whether retrying the same request later can succeed: the error says nothing about the
    /// records.
    public var isTransient: Bool {
        switch self {
        case .networkFailure, .serviceUnavailable, .requestRateLimited, .notAuthenticated: true
        default: false
        }
    }

    /// The delay the cloud asked for before a retry.
    public var retryAfter: Duration? {
        switch self {
        case .serviceUnavailable(let delay), .requestRateLimited(let delay): delay
        default: nil
        }
    }

    /// The code and what it concerns.
    public var description: String {
        switch self {
        case .serverRecordChanged(let record):
            "serverRecordChanged: \(record.id) has change tag \(record.changeTag ?? "none") on the server"
        case .zoneNotFound(let zone): "zoneNotFound: \(zone)"
        case .unknownItem(let id): "unknownItem: \(id)"
        case .supersededByDelete(let id): "supersededByDelete: \(id) was deleted after the cloud held every field version of this save"
        case .assetNotFound(let hash): "assetNotFound: \(hash)"
        case .invalidAsset(let hash, let reason): "invalidAsset: \(hash): \(reason)"
        case .referenceViolation(let id): "referenceViolation: \(id)"
        case .permissionFailure(let id): "permissionFailure" + (id.map { ": \($0)" } ?? "")
        case .batchRequestFailed(let id): "batchRequestFailed: \(id) (another change in its zone failed)"
        case .limitExceeded: "limitExceeded"
        case .quotaExceeded: "quotaExceeded"
        case .changeTokenExpired: "changeTokenExpired"
        case .notAuthenticated: "notAuthenticated"
        case .networkFailure: "networkFailure"
        case .serviceUnavailable(let delay): "serviceUnavailable" + (delay.map { " (retry after \($0))" } ?? "")
        case .requestRateLimited(let delay): "requestRateLimited" + (delay.map { " (retry after \($0))" } ?? "")
        }
    }
}
