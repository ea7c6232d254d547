import Foundation
import StrataCloud

/// The HTTP status each `CloudError` travels with. The JSON body (``ErrorResponse``) is what a
/// client decodes; the status lets proxies, logs and clients without a body tell the failures
/// apart, and the client falls back on it when a response carries no error body.
public enum CloudErrorStatus {
    /// The status for `error`.
    public static func code(for error: CloudError) -> Int {
        switch error {
        case .serverRecordChanged, .referenceViolation, .batchRequestFailed, .supersededByDelete: 409
        case .zoneNotFound, .unknownItem, .assetNotFound: 404
        case .invalidAsset: 422
        case .permissionFailure: 403
        case .limitExceeded: 413
        case .quotaExceeded: 507
        case .changeTokenExpired: 410
        case .notAuthenticated: 401
        case .networkFailure: 502
        case .serviceUnavailable: 503
        case .requestRateLimited: 429
        }
    }

    /// The `Retry-After` header value for `error`: whole seconds, rounded up so a client never
    /// retries early; nil when the error asks for no delay.
    public static func retryAfterHeader(for error: CloudError) -> String? {
        guard let delay = error.retryAfter else { return nil }
        let (seconds, attoseconds) = delay.components
        return String(max(0, attoseconds > 0 ? seconds + 1 : seconds))
    }

    /// The error a response without an error body stands for, from its status and `Retry-After`
    /// header (delta-seconds); nil for a status that names no cloud error.
    public static func error(forStatus status: Int, retryAfter: String?) -> CloudError? {
        let delay = retryAfter.flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.map { Duration.seconds($0) }
        switch status {
        case 401: return .notAuthenticated
        case 413: return .limitExceeded
        case 429: return .requestRateLimited(retryAfter: delay)
        case 503: return .serviceUnavailable(retryAfter: delay)
        case 507: return .quotaExceeded
        case 410: return .changeTokenExpired
        case 502, 504: return .networkFailure
        default: return nil
        }
    }
}
