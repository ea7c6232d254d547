import StrataSQLite

/// The decision for one column with an app-defined merge (``MergePolicy/custom(table:column:merge:)``),
/// apart from the reading and writing. No database: unit-tested alone (CustomMergeTests).
enum CustomMerge {
    /// What the column becomes.
    struct Decision: Equatable {
        /// The value to write; nil keeps the local value as it is.
        var value: DatabaseValue?
        /// The column's version from now on.
        var version: HybridTimestamp?
        /// Whether the local side holds what the cloud lacks: the record must be sent.
        var localWins: Bool
    }

    /// Merges an incoming value of the column into the local one.
    ///
    /// The same frame as the default rule: no local row or no local version takes the
    /// incoming value; a record without the field (an older app version) keeps the local one;
    /// a field without a version loses, as it does there. An incoming edit no later than the
    /// one this device already knows from the cloud (`knownVersion`, the column's version in
    /// the last known server record) is no news: the local value stays, without `merge`, as
    /// the default rule keeps a later local edit. That is this device's own save coming back
    /// in a fetch after it edited the row again, or a page applied twice: merged, it could
    /// undo the edit made on top of it (a maximum of texts kept the older, greater text).
    /// Otherwise equal values need nothing, and different ones go to `merge`, whose result
    /// takes the greater version.
    static func decide(
        local: DatabaseValue?, localVersion: HybridTimestamp?, incoming: DatabaseValue?, incomingVersion: HybridTimestamp?,
        knownVersion: HybridTimestamp? = nil, merge: (MergeCandidate, MergeCandidate) -> DatabaseValue
    ) -> Decision {
        guard let incoming else {
            return Decision(value: nil, version: localVersion, localWins: local != nil && localVersion != nil)
        }
        guard let local, let localVersion else {
            return Decision(value: incoming, version: incomingVersion, localWins: false)
        }
        guard let incomingVersion else { return Decision(value: nil, version: localVersion, localWins: true) }
        if let knownVersion, incomingVersion <= knownVersion, incomingVersion < localVersion {
            return Decision(value: nil, version: localVersion, localWins: local != incoming)
        }
        let version = max(localVersion, incomingVersion)
        if local == incoming { return Decision(value: incoming, version: version, localWins: false) }
        let merged = merge(
            MergeCandidate(value: local, version: localVersion), MergeCandidate(value: incoming, version: incomingVersion))
        return Decision(value: merged, version: version, localWins: merged != incoming)
    }
}
