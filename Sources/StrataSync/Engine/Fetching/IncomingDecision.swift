/// The decisions of applying one record from the cloud, apart from the reading and writing:
/// `IncomingChanges.apply` gathers what this needs from the database and carries out what it
/// says. No database: unit-tested alone (IncomingDecisionTests).
enum IncomingDecision {
    /// Whether an incoming record is the copy a move left in the record's old zone (see
    /// ZoneMoves): the record lives where its newest parent is, so a copy from another zone
    /// whose parent column is not newer than the local one is on its way out.
    static func isLeftBehindCopy(
        storedZone: CloudZoneID?, incomingZone: CloudZoneID, localParentVersion: HybridTimestamp?, incomingParentVersion: HybridTimestamp?
    ) -> Bool {
        guard let storedZone, storedZone != incomingZone, let localParentVersion else { return false }
        return incomingParentVersion.map { $0 < localParentVersion } ?? true
    }

    /// What a record whose parent row is not here becomes.
    enum MissingParent: Equatable {
        /// The parent has not arrived: the record waits for it.
        case waitForParent
        /// The parent was deleted here (delete not sent yet) under `ON DELETE CASCADE`: the
        /// record is deleted too, as it would have been had it arrived earlier.
        case deleteWithParent
        /// The parent was deleted here under another `ON DELETE`: the column gets the
        /// action's replacement (NULL or the default), versioned now so it goes out.
        case replaceParentColumn
        /// The parent was deleted here, but this device's later edit of the column already
        /// moved the record elsewhere: the incoming parent loses the merge anyway.
        case keepLocalParentColumn
    }

    static func missingParent(
        parentDeletedLocally: Bool, onDelete: String, localColumnVersion: HybridTimestamp?, incomingColumnVersion: HybridTimestamp?
    ) -> MissingParent {
        guard parentDeletedLocally else { return .waitForParent }
        if onDelete == "CASCADE" { return .deleteWithParent }
        let localWins = localColumnVersion.map { local in incomingColumnVersion.map { local > $0 } ?? true } ?? false
        return localWins ? .keepLocalParentColumn : .replaceParentColumn
    }

    /// The record's pending state once merged: still to be sent when this device's values won
    /// a field (or a field was forced locally), with its revision moved on only when it was
    /// not already pending; nothing pending otherwise.
    static func pendingAfterMerge(
        localWins: Bool, forcedLocally: Bool, pending: ChangeLog.Operation?, revision: Int64
    ) -> (pending: ChangeLog.Operation?, revision: Int64) {
        guard localWins || forcedLocally else { return (nil, revision) }
        return (.save, pending == nil ? revision + 1 : revision)
    }
}
