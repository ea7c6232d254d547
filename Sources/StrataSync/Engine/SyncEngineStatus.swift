/// What the engine is doing, as one value: read ``SyncEngine/status`` (observable).
public struct SyncEngineStatus: Sendable {
    /// Whether the engine schedules sends and fetches on its own.
    public var isRunning = false
    /// Whether a send is under way.
    public var isSendingChanges = false
    /// Whether a fetch is under way.
    public var isFetchingChanges = false
    /// Local records with a change waiting to be sent, as of the last send or fetch.
    public var pendingCount = 0
    /// Incoming records that could not be applied (a field of the wrong type, a constraint).
    public var quarantinedCount = 0
    /// The last failure, cleared by the next send or fetch that succeeds.
    public var lastError: (any Error)?
    /// Whether the last send stopped because the user's cloud storage is full
    /// (`CloudError/quotaExceeded`): the app asks the user to free space. Nothing is lost;
    /// the changes stay pending. False again once a send succeeds.
    public var isOverQuota = false
    /// How far the send and fetch under way have come, per zone: what a progress bar shows.
    /// Empty when neither runs.
    public var progress = SyncProgress()
    /// How many times the status changed since the engine was created: each change has a
    /// larger one, so a reader of ``SyncEngine/statusUpdates()`` can tell when it has caught up
    /// with ``SyncEngine/status``.
    public internal(set) var revision = 0

    /// Whether a send or a fetch is under way.
    public var isSynchronizing: Bool { isSendingChanges || isFetchingChanges }
}
