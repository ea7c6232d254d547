import Synchronization

extension SyncEngine {
    /// Every status the engine goes through, in order: the current one first, then one per
    /// change, each with a larger ``SyncEngineStatus/revision``.
    ///
    /// Nothing is skipped or merged (the stream buffers what its reader has not taken yet), so
    /// a command-line progress bar can draw every batch; a UI that only needs the latest value
    /// can observe ``status`` instead. A change is yielded before the call that made it
    /// returns: once ``sendChanges()`` returns, the stream holds every status of that send.
    /// The stream ends when the task iterating it is cancelled, or when the engine is released.
    ///
    /// ```swift
    /// for await status in engine.statusUpdates() {
    ///     print("\(status.progress.sent) of \(status.progress.toSend) sent")
    /// }
    /// ```
    public func statusUpdates() -> AsyncStream<SyncEngineStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncEngineStatus.self, bufferingPolicy: .unbounded)
        // Under the status lock: no change can fall between the first value and the next.
        let id = statusStorage.withLock { status in
            continuation.yield(status)
            return statusSubscribers.withLock { $0.add(continuation) }
        }
        continuation.onTermination = { [weak self] _ in
            self?.statusSubscribers.withLock { _ = $0.remove(id) }
        }
        return stream
    }
}

/// The open streams of ``SyncEngine/statusUpdates()``.
struct StatusSubscribers {
    private var nextID = 0
    private var continuations: [Int: AsyncStream<SyncEngineStatus>.Continuation] = [:]

    mutating func add(_ continuation: AsyncStream<SyncEngineStatus>.Continuation) -> Int {
        nextID += 1
        continuations[nextID] = continuation
        return nextID
    }

    mutating func remove(_ id: Int) -> AsyncStream<SyncEngineStatus>.Continuation? {
        continuations.removeValue(forKey: id)
    }

    mutating func removeAll() -> [AsyncStream<SyncEngineStatus>.Continuation] {
        defer { continuations = [:] }
        return Array(continuations.values)
    }

    func yield(_ status: SyncEngineStatus) {
        for continuation in continuations.values { continuation.yield(status) }
    }
}
