import StrataSQLite

/// The send and fetch loops' one call each per batch or page, into ``SyncEngineStatus/progress``.
extension SyncEngine {
    /// A send starts: what each zone has pending (`pending`, read by the send with its other
    /// start-up reads) is its estimated total.
    ///
    /// Returns how many records wait in all: the send's plan starts from it, and one grouped
    /// count serves both.
    func startSendProgress(_ pending: [CloudZoneID: Int]) -> Int {
        updateStatus { $0.progress.startSending(pending) }
        return pending.values.reduce(0, +)
    }

    /// A batch's answers were recorded.
    func recordSendProgress(_ outcome: SendOutcome) {
        guard !outcome.accepted.isEmpty else { return }
        updateStatus { $0.progress.recordSent(outcome.accepted) }
    }

    /// The send ended, however it ended.
    func finishSendProgress() {
        // Observers hear of a change only when there is one.
        guard statusStorage.withLock({ $0.progress.toSend > 0 }) else { return }
        updateStatus { $0.progress.finishSending() }
    }

    /// A page of `zone`, asked for since `token`, was applied.
    func recordFetchProgress(_ page: CloudZoneChanges, in zone: CloudZoneID, since token: CloudChangeToken?) {
        let pageSize = configuration.fetchPageSize
        updateStatus {
            $0.progress.recordFetchedPage(
                in: zone, count: page.changed.count + page.deleted.count, moreComing: page.moreComing,
                remainingEstimate: page.remainingEstimate, pageSize: pageSize, fromStart: token == nil)
        }
    }

    /// The fetch ended, however it ended.
    func finishFetchProgress() {
        guard statusStorage.withLock({ $0.progress.toFetch > 0 }) else { return }
        updateStatus { $0.progress.finishFetching() }
    }
}
