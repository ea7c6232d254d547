import StrataCloud

/// A `CloudError` as JSON, losslessly: the case in ``code`` and its associated values in the
/// fields that case uses.
public struct CloudErrorBody: Codable, Sendable, Hashable {
    /// The case name, as CloudError spells it (`serverRecordChanged`, `zoneNotFound`, ...).
    public var code: String
    /// A human-readable description; ignored when decoding.
    public var message: String?
    /// The server's record of `serverRecordChanged`.
    public var record: CloudRecord?
    /// The zone of `zoneNotFound`.
    public var zone: CloudZoneID?
    /// The record of `unknownItem`, `supersededByDelete`, `referenceViolation`, `batchRequestFailed` and (optionally)
    /// `permissionFailure`.
    public var recordID: CloudRecordID?
    /// The asset hash of `assetNotFound` and `invalidAsset`.
    public var hash: String?
    /// Why an asset is invalid.
    public var reason: String?
    /// The exact delay of `serviceUnavailable` and `requestRateLimited`; absent when none.
    public var retryAfter: WireDuration?
    /// The request field an ``InvalidRequest`` names (`invalidRequest` only).
    public var field: String?

    /// A body that stands for no `CloudError`: ``InvalidRequest`` and the service's own
    /// failures (`notFound`, `methodNotAllowed`, `internalError`).
    public init(code: String, message: String, field: String? = nil, reason: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.reason = reason
    }

    /// The body of `error`.
    public init(_ error: CloudError) {
        message = error.description
        switch error {
        case .serverRecordChanged(let record):
            code = "serverRecordChanged"
            self.record = record
        case .zoneNotFound(let zone):
            code = "zoneNotFound"
            self.zone = zone
        case .unknownItem(let id):
            code = "unknownItem"
            recordID = id
        case .supersededByDelete(let id):
            code = "supersededByDelete"
            recordID = id
        case .assetNotFound(let hash):
            code = "assetNotFound"
            self.hash = hash
        case .invalidAsset(let hash, let reason):
            code = "invalidAsset"
            self.hash = hash
            self.reason = reason
        case .referenceViolation(let id):
            code = "referenceViolation"
            recordID = id
        case .permissionFailure(let id):
            code = "permissionFailure"
            recordID = id
        case .batchRequestFailed(let id):
            code = "batchRequestFailed"
            recordID = id
        case .limitExceeded: code = "limitExceeded"
        case .quotaExceeded: code = "quotaExceeded"
        case .changeTokenExpired: code = "changeTokenExpired"
        case .notAuthenticated: code = "notAuthenticated"
        case .networkFailure: code = "networkFailure"
        case .serviceUnavailable(let delay):
            code = "serviceUnavailable"
            retryAfter = delay.map(WireDuration.init)
        case .requestRateLimited(let delay):
            code = "requestRateLimited"
            retryAfter = delay.map(WireDuration.init)
        }
    }

    /// The error this body describes.
    ///
    /// - Throws: ``CloudWireError/malformedError(_:)`` for an unknown code or a missing field.
    public func cloudError() throws(CloudWireError) -> CloudError {
        func require<T>(_ value: T?) throws(CloudWireError) -> T {
            guard let value else { throw CloudWireError.malformedError(code) }
            return value
        }
        switch code {
        case "serverRecordChanged": return .serverRecordChanged(try require(record))
        case "zoneNotFound": return .zoneNotFound(try require(zone))
        case "unknownItem": return .unknownItem(try require(recordID))
        case "supersededByDelete": return .supersededByDelete(try require(recordID))
        case "assetNotFound": return .assetNotFound(try require(hash))
        case "invalidAsset": return .invalidAsset(try require(hash), reason: reason ?? "")
        case "referenceViolation": return .referenceViolation(try require(recordID))
        case "permissionFailure": return .permissionFailure(recordID)
        case "batchRequestFailed": return .batchRequestFailed(try require(recordID))
        case "limitExceeded": return .limitExceeded
        case "quotaExceeded": return .quotaExceeded
        case "changeTokenExpired": return .changeTokenExpired
        case "notAuthenticated": return .notAuthenticated
        case "networkFailure": return .networkFailure
        case "serviceUnavailable": return .serviceUnavailable(retryAfter: retryAfter?.duration)
        case "requestRateLimited": return .requestRateLimited(retryAfter: retryAfter?.duration)
        default: throw CloudWireError.malformedError(code)
        }
    }
}

/// The body of every failed response: `{"error": {...}}`.
public struct ErrorResponse: Codable, Sendable, Hashable {
    /// What failed.
    public var error: CloudErrorBody

    /// A response carrying `error`.
    public init(_ error: CloudError) {
        self.error = CloudErrorBody(error)
    }

    /// A response carrying `body`, for failures no `CloudError` describes.
    public init(body: CloudErrorBody) {
        error = body
    }
}

/// A body that does not follow the wire format.
public enum CloudWireError: Error, Hashable, Sendable {
    /// An error body with an unknown code, or without the field its code needs.
    case malformedError(String)
}
