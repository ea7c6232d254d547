/// The per-field merge rule, in one place.
///
/// For every column, the edit with the greater version wins; versions are hybrid logical clock
/// timestamps, so "greater" means "made later, or concurrently and later by physical time, or
/// tied and from the greater device id". An incoming value also wins a tie: the same version is
/// the same edit, so applying it again is harmless, and that is what makes applying a fetched
/// page twice (after a crash) change nothing. A field the incoming record does not carry (an
/// older app version that lacks the column) keeps the local value.
enum FieldMerge {
    /// The outcome for one record.
    struct Outcome: Equatable {
        /// The columns whose incoming value wins, with the value.
        var incomingWins: [String: CloudValue] = [:]
        /// The merged version of every column.
        var versions: [String: HybridTimestamp] = [:]
        /// Whether a local edit won a column: the record must be sent again.
        var localWins = false
    }

    /// Merges `incoming` into a local row whose columns carry `localVersions`.
    ///
    /// - Parameters:
    ///   - columns: the table's synced value columns.
    ///   - rowExists: false when there is no local row: every incoming field applies.
    static func merge(
        columns: [String], localVersions: [String: HybridTimestamp], incoming: CloudRecord, rowExists: Bool
    ) -> Outcome {
        if !rowExists, let whole = wholeRecord(columns: columns, localVersions: localVersions, incoming: incoming) {
            return whole
        }
        var outcome = Outcome()
        outcome.incomingWins.reserveCapacity(columns.count)
        outcome.versions.reserveCapacity(columns.count)
        for column in columns {
            let local = localVersions[column]
            guard let value = incoming.fields[column] else {
                if let local { outcome.versions[column] = local }
                if rowExists, local != nil { outcome.localWins = true }
                continue
            }
            let remote = incoming.fieldVersions[column]
            if rowExists, let local, remote.map({ $0 < local }) ?? true {
                outcome.versions[column] = local
                outcome.localWins = true
            } else {
                outcome.incomingWins[column] = value
                if let remote { outcome.versions[column] = remote }
            }
        }
        return outcome
    }

    /// The outcome for a record new here that carries a value and a version for exactly the
    /// synced columns, and no local version: every field wins, and the outcome shares the
    /// record's own dictionaries. Nil for any other shape. What a first sync applies, where
    /// building the same dictionaries again, key by key, was a tenth of applying a record.
    private static func wholeRecord(columns: [String], localVersions: [String: HybridTimestamp], incoming: CloudRecord) -> Outcome? {
        guard localVersions.isEmpty, incoming.fields.count == columns.count, incoming.fieldVersions.count == columns.count else {
            return nil
        }
        for column in columns where incoming.fields[column] == nil || incoming.fieldVersions[column] == nil { return nil }
        return Outcome(incomingWins: incoming.fields, versions: incoming.fieldVersions)
    }
}
