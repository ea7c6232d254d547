/// The rules every cloud applies to one zone's saves and deletes, checked against the zone as
/// it would be after all of them: `MockCloud` and the PostgreSQL store both call this, so they
/// cannot drift apart.
package enum CloudModifyRules {
    /// The failing operations and why: a save without a tag over an existing record or with a
    /// stale tag (``CloudError/serverRecordChanged(_:)``), a tag for a record that is gone
    /// (``CloudError/unknownItem(_:)``), a save of a deleted record carrying nothing newer than
    /// what the delete removed (``CloudError/supersededByDelete(_:)``), a parent that would not
    /// exist, or a delete that would leave children behind
    /// (``CloudError/referenceViolation(_:)``). The caller fails the zone's other operations
    /// with ``CloudError/batchRequestFailed(_:)``.
    ///
    /// - Parameters:
    ///   - existing: the zone's current records among those the request names (saved, deleted,
    ///     or parents of saved ones), by name.
    ///   - deleted: the field versions each deleted record had when it was deleted, kept by its
    ///     tombstone, for saved names the zone does not hold.
    ///   - children: the zone's records whose parent is one the request deletes.
    package static func failures(
        saving saves: [CloudRecord], deleting deletes: [CloudRecordID], in zone: CloudZoneID,
        existing: ExactKeyed<CloudRecord>, deleted removedVersions: ExactKeyed<[String: HybridTimestamp]>,
        children: [(name: String, parent: String)]
    ) -> [CloudRecordID: CloudError] {
        var failures: [CloudRecordID: CloudError] = [:]
        // Names compare as bytes (``ExactText``), as the databases compare keys.
        let deleted = ExactNames(deletes.map(\.name))
        let saved = ExactKeyed(saves.map { ($0.id.name, $0) }, uniquingKeysWith: { $1 })
        for record in saves {
            let current = existing[record.id.name]
            switch (record.changeTag, current) {
            case (_, nil) where isSuperseded(record, byDeleteOf: removedVersions[record.id.name]):
                failures[record.id] = .supersededByDelete(record.id)
            case (nil, let current?):
                failures[record.id] = .serverRecordChanged(current)
            case (_?, nil):
                failures[record.id] = .unknownItem(record.id)
            case (let tag?, let current?) where current.changeTag != tag:
                failures[record.id] = .serverRecordChanged(current)
            default:
                break
            }
            if failures[record.id] == nil, let parent = record.parent {
                let parentStays =
                    parent.zone == zone && !deleted.contains(parent.name)
                    && (existing[parent.name] != nil || saved[parent.name] != nil)
                if !parentStays { failures[record.id] = .referenceViolation(record.id) }
            }
        }
        for id in deletes {
            let childStays =
                children.contains { child in
                    child.parent.hasSameBytes(as: id.name) && !deleted.contains(child.name)
                        && (saved[child.name].map { $0.parent?.name.hasSameBytes(as: id.name) ?? false } ?? true)
                } || saves.contains { $0.parent == id }
            if childStays { failures[id] = .referenceViolation(id) }
        }
        return failures
    }

    /// Whether the delete that removed a record already held everything `record` carries:
    /// each of its field versions at most the same field's when deleted. Such a save is one the
    /// cloud applied before the delete, sent again because its answer was lost (a device that
    /// edits after seeing the delete stamps a newer version), and saving it would undo a
    /// delete made after it. Without versions on either side there is nothing to compare, and
    /// the save goes through as new, as before tombstones kept versions.
    package static func isSuperseded(_ record: CloudRecord, byDeleteOf removed: [String: HybridTimestamp]?) -> Bool {
        guard let removed, !removed.isEmpty, !record.fieldVersions.isEmpty else { return false }
        return record.fieldVersions.allSatisfy { field, version in
            removed[field].map { version <= $0 } ?? false
        }
    }
}
