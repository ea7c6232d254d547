import Strata

/// The text bar Scorekeeper draws while a long sync runs, from the engine's
/// ``SyncEngineStatus/progress``: `[########------------] 40/100 records sent`.
public struct SyncProgressBar: Sendable, Hashable {
    /// How many characters the bar has between its brackets.
    public var width: Int
    /// The fewest records a send or fetch must expect before the bar shows: a sync of a few
    /// changes ends before a bar would tell the user anything.
    public var minimumRecords: Int

    /// A bar of `width` characters, shown for syncs of at least `minimumRecords` records.
    public init(width: Int = 20, minimumRecords: Int = 100) {
        self.width = max(1, width)
        self.minimumRecords = minimumRecords
    }

    /// The bar for `progress`, or nil when no send or fetch that long is under way. A fetch
    /// inside a send (to merge what a conflict needs) is what moves, so fetching shows first.
    public func line(for progress: SyncProgress) -> String? {
        if progress.toFetch > 0 && progress.toFetch >= minimumRecords {
            return bar(progress.fetched, of: progress.toFetch) + " records fetched"
        }
        if progress.toSend > 0 && progress.toSend >= minimumRecords {
            return bar(progress.sent, of: progress.toSend) + " records sent"
        }
        return nil
    }

    func bar(_ done: Int, of total: Int) -> String {
        let filled = min(width, max(0, done) * width / max(1, total))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] \(done)/\(total)"
    }
}
