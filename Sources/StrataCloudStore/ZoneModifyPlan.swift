import StrataCloud

/// The decisions of one zone's modify, apart from its SQL: which failures refuse the whole
/// request, what each delete leaves behind (a tombstone for whom, a share it ends), where
/// each saved record will sit (its shared root), which saved records move between shares
/// and who sees them leave, which parents gain a child (and a new tag), and how much the
/// owner's stored bytes grow. `CloudStoreDatabase.modify` reads the zone (``ZoneShape``),
/// asks this, and writes what it says, numbering positions as it goes. No database:
/// unit-tested alone (ZoneModifyPlanTests).
struct ZoneModifyPlan {
    struct Deletion: Equatable {
        var id: CloudRecordID
        /// The record's type, kept in its tombstone.
        var type: String
        /// The participants who saw it, and so are told it is gone.
        var audience: [String]
        /// Deleting a shared root ends its share, for everyone.
        var endsShare: Bool
    }

    struct Move: Equatable {
        var name: String
        /// The shared root the record (and its subtree) is under from now on.
        var rootAfter: String?
        /// Who saw it under its old root and does not under the new one.
        var leaving: [String]
    }

    /// Deletes of records the zone holds, in request order; deleting a missing record is a
    /// success with nothing to write.
    var deletions: [Deletion] = []
    /// The shares ended by deletions: their participants are told.
    var endedShareAudience: [String] = []
    /// Each saved record with the shared root it will be under.
    var writes: [(record: CloudRecord, shareRoot: String?)] = []
    var moves: [Move] = []
    /// Parents in this zone that gained a child, sorted; not those the request deletes, nor those
    /// it saves (their save gives them a new tag).
    var touchedParents: [String] = []
    /// How the owner's stored bytes change.
    var growth: Int64 = 0

    /// The failures that refuse the request (each record its own, the rest
    /// `batchRequestFailed`), or a plan. A participant's request (`shared`) is checked
    /// against the sharing rules first, then every request against ``CloudModifyRules``.
    /// Whether two optional names are the same record's, by their bytes.
    static func sameName(_ left: String?, _ right: String?) -> Bool {
        switch (left, right) {
        case (nil, nil): true
        case (let left?, let right?): left.hasSameBytes(as: right)
        default: false
        }
    }

    static func make(
        saving saves: [CloudRecord], deleting deletes: [CloudRecordID], in zone: CloudZoneID, shape: ZoneShape, shared: Bool
    ) -> Result<ZoneModifyPlan, Refusal> {
        if shared {
            let failures = shape.permissionFailures(saving: saves, deleting: deletes)
            if !failures.isEmpty { return .failure(Refusal(failures: failures)) }
        }
        let failures = CloudModifyRules.failures(
            saving: saves, deleting: deletes, in: zone,
            existing: ExactKeyed(shape.existing.map { ($0.key, $0.value.record) }, uniquingKeysWith: { $1 }), deleted: shape.deleted,
            children: shape.children)
        if !failures.isEmpty { return .failure(Refusal(failures: failures)) }

        var plan = ZoneModifyPlan()
        for id in deletes {
            guard let removed = shape.existing[id.name] else { continue }
            let endsShare = shape.sharedRoots.contains(id.name)
            plan.deletions.append(
                Deletion(id: id, type: removed.record.type, audience: shape.audience(of: removed.shareRoot), endsShare: endsShare))
            if endsShare { plan.endedShareAudience += shape.audience(of: id.name) }
        }
        let pending = ZoneShape.pendingParents(of: saves)
        for record in saves {
            plan.writes.append((record, shape.shareRoot(after: record.id.name, pending: pending)))
        }
        // A record moved under another share (or out of one) takes its subtree along: the
        // new share's participants get it, the old share's see it leave.
        for record in saves {
            guard let before = shape.existing[record.id.name], before.record.parent != record.parent else { continue }
            let rootAfter = shape.shareRoot(after: record.id.name, pending: pending)
            // By bytes: two roots whose names differ only in their Unicode form are two shares.
            guard !Self.sameName(rootAfter, before.shareRoot) else { continue }
            let leaving = Set(shape.audience(of: before.shareRoot)).subtracting(shape.audience(of: rootAfter))
            plan.moves.append(Move(name: record.id.name, rootAfter: rootAfter, leaving: leaving.sorted()))
        }
        let parents = ExactNames(saves.compactMap { $0.parent?.zone == zone ? $0.parent?.name : nil })
        plan.touchedParents = Array(
            parents.subtracting(ExactNames(deletes.map(\.name))).subtracting(ExactNames(saves.map(\.id.name)))
        ).sorted()
        plan.growth =
            saves.reduce(Int64(0)) { $0 + Int64($1.encodedSize - (shape.existing[$1.id.name]?.record.encodedSize ?? 0)) }
            - deletes.reduce(Int64(0)) { $0 + Int64(shape.existing[$1.name]?.record.encodedSize ?? 0) }
        return .success(plan)
    }

    /// Why a request is refused: the records that failed, each with its error.
    struct Refusal: Error, Equatable {
        var failures: [CloudRecordID: CloudError]

        /// The error of each item: its own, or `batchRequestFailed` for the others.
        func error(for id: CloudRecordID) -> CloudError {
            failures[id] ?? .batchRequestFailed(id)
        }
    }
}
