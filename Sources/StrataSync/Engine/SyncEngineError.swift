/// Failures of the sync engine itself (the cloud's own come as `CloudError`).
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
    /// The database already has another container's metadatabase attached (by a
    /// `prepareDatabase` that named another container, or none before the engine first ran):
    /// syncing from it would re-upload everything or mix two clouds' records.
    case metadatabaseMismatch(attached: String, expected: String)
    /// A send stopped making progress: the same records stayed pending round after round.
    /// Nothing is lost; they stay pending, and the error names them.
    case sendStalled(pendingCount: Int, records: [String], lastFailure: String?)
    /// A fetched record refers to the content of a large value that is not on this device
    /// and was not downloaded with it; the record is not applied.
    case missingContent(recordName: String, column: String, hash: String)
    /// A zone's fetch stopped making progress: the cloud said more changes come but did not
    /// move its token, gave a token twice in one fetch (its pages going round in a circle),
    /// answered a page with two different tokens (the one the page arrived with and the one
    /// its records came with), or its tokens kept expiring as fast as the zone was fetched
    /// again. Retrying the same way cannot help; what was applied stays applied.
    case fetchStalled(zone: CloudZoneID, reason: String)
    /// An encryption call on an engine whose configuration turned encryption off.
    case encryptionDisabled

    /// Whether a send stopped because the user's cloud storage is full: some record was
    /// refused with `CloudError/quotaExceeded`.
    public var isQuotaExceeded: Bool {
        guard case .sendFailed(let failures) = self else { return false }
        return failures.values.contains(.quotaExceeded)
    }

    /// What failed, naming the record or table.
    public var description: String {
        switch self {
        case .corruptMetadata(let name, let detail): "the sync metadata of \(name) is unreadable: \(detail)"
        case .noContainer: "the live context has no cloud container: pass `container:` to SyncEngine"
        case .accountUnavailable(let status): "the cloud account is not available (\(status.rawValue))"
        case .sendFailed(let failures):
            "sending failed for " + failures.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        case .recordQuarantined(let name, let table, let reason): "record \(name) of table \(table) was quarantined: \(reason)"
        case .metadatabaseMismatch(let attached, let expected):
            "the database has the metadatabase \(attached) attached, but this engine's container uses \(expected): "
                + "pass the engine's container identifier to attachMetadatabase(containerIdentifier:)"
        case .sendStalled(let count, let records, let lastFailure):
            "sending made no progress: \(count) records stay pending (\(records.prefix(5).joined(separator: ", "))"
                + (records.count > 5 ? ", …)" : ")") + (lastFailure.map { "; last failure: \($0)" } ?? "")
        case .missingContent(let name, let column, let hash):
            "record \(name) needs the content \(hash) of column \(column), which is not on this device"
        case .fetchStalled(let zone, let reason): "fetching zone \(zone) made no progress: \(reason)"
        case .encryptionDisabled: "this engine does not encrypt (its configuration says `encryption: .disabled`)"
        }
    }
}
