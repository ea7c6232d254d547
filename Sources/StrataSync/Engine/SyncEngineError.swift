/// Failures of the sync engine itself (the cloud's own come as ``CloudError``).
public enum SyncEngineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The metadatabase holds a value the engine cannot read.
    case corruptMetadata(recordName: String, detail: String)
    /// The engine was created in the live context without a cloud container.
    case noContainer
    /// The account cannot sync now (signed out, restricted…).
    case accountUnavailable(CloudAccountStatus)
    /// A send made no progress: every record failed with a non-retryable error.
    case sendFailed([String: CloudError])
    /// An incoming record could not be applied and was quarantined.
    case recordQuarantined(recordName: String, table: String, reason: String)

    /// What failed, naming the record or table.
    public var description: String {
        switch self {
        case .corruptMetadata(let name, let detail): "the sync metadata of \(name) is unreadable: \(detail)"
        case .noContainer: "the live context has no cloud container: pass `container:` to SyncEngine"
        case .accountUnavailable(let status): "the cloud account is not available (\(status.rawValue))"
        case .sendFailed(let failures):
            "sending failed for " + failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        case .recordQuarantined(let name, let table, let reason): "record \(name) of table \(table) was quarantined: \(reason)"
        }
    }
}
