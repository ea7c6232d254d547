/// A change of the signed-in cloud account, as the engine notices it before a send or fetch.
public enum SyncAccountChange: Sendable, Hashable {
    /// The user signed out (or the account became unavailable for good).
    case signedOut(previousUser: String)
    /// Another user signed in.
    case switched(from: String, to: String)
}

/// Decides what happens to local data when the account changes.
///
/// Without a delegate the engine deletes every synced row and its metadata
/// (``SyncEngine/deleteLocalData()``): the data belongs to the previous user, who still has it in
/// the cloud. Apps that keep it (asking the user first, say) give a delegate.
public protocol SyncEngineDelegate: Sendable {
    /// Called once per change, before the engine's next send or fetch goes on.
    func syncEngine(_ engine: SyncEngine, accountChanged change: SyncAccountChange) async

    /// Called when a send fails for a reason retrying alone cannot fix, scheduled or asked
    /// for: records the cloud refused (``SyncEngineError/sendFailed(_:)``; a full quota is
    /// ``SyncEngineError/isQuotaExceeded``) or a send that stopped making progress. The
    /// changes stay pending; ``SyncEngineStatus/lastError`` holds the same error. By default,
    /// nothing.
    func syncEngine(_ engine: SyncEngine, sendFailed error: SyncEngineError) async
}

extension SyncEngineDelegate {
    public func syncEngine(_ engine: SyncEngine, sendFailed error: SyncEngineError) async {}
}
