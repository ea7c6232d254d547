/// One database of a ``MockCloudContainer``.
struct MockCloudDatabase: CloudDatabase {
    let container: MockCloudContainer
    let scope: CloudDatabaseScope

    private var cloud: MockCloud { container.cloud }
    private var user: String { container.user }

    func saveZones(_ zones: [CloudZoneID]) async throws {
        let (user, scope) = (user, scope)
        try cloud.serve(.saveZones, user: user, from: container.id) { state in
            for zone in zones {
                guard scope == .private, zone.owner == user else { throw CloudError.permissionFailure(nil) }
                guard state.zones[zone] == nil else { continue }
                state.zones[zone] = MockCloudState.Zone(lastChange: state.nextSequence())
                state.deletedZones[zone] = nil
            }
        }
    }

    func deleteZones(_ zones: [CloudZoneID]) async throws {
        let (user, scope) = (user, scope)
        try cloud.serve(.deleteZones, user: user, from: container.id) { state in
            for zone in zones {
                guard scope == .private, zone.owner == user else { throw CloudError.permissionFailure(nil) }
                guard state.zones.removeValue(forKey: zone) != nil else { continue }
                state.deletedZones[zone] = state.nextSequence()
                let ended = state.shares.filter { $0.key.zone == zone }
                for root in ended.keys { state.shares[root] = nil }
                state.recordRevocations(in: zone, formerParticipants: Set(ended.values.flatMap { $0.share.participants.map(\.user) }))
            }
        }
    }

    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        let (user, scope) = (user, scope)
        return try cloud.serve(.fetchRecords, user: user) { state in
            try state.limits.checkFetch(count: ids.count)
            var results: [CloudRecordID: Result<CloudRecord, CloudError>] = [:]
            for id in ids {
                let zone = state.zones[id.zone]
                let visible =
                    state.permission(of: user, for: id.name, in: id.zone, scope: scope) {
                        zone?.records[$0]?.record.parent
                    } > .none
                if !state.canAccess(id.zone, user: user, scope: scope) {
                    results[id] = .failure(.permissionFailure(id))
                } else if zone?.records[id.name] != nil && !visible {
                    // A record outside the user's shares is as unknown as a missing one: the
                    // cloud does not tell who holds what.
                    results[id] = .failure(.unknownItem(id))
                } else if let zone {
                    results[id] = zone.records[id.name].map { .success($0.record) } ?? .failure(.unknownItem(id))
                } else {
                    results[id] = .failure(.zoneNotFound(id.zone))
                }
            }
            return results
        }
    }

    func modifyRecords(saving saves: [CloudRecord], deleting deletes: [CloudRecordID]) async throws -> CloudModifyResult {
        let (user, scope) = (user, scope)
        return try cloud.serve(.modifyRecords, user: user, from: container.id) { state in
            let limits = state.limits
            try limits.checkModify(saving: saves, deletingCount: deletes.count)
            state.modifyRequestSizes.append(saves.count + deletes.count)
            if let quota = limits.maximumBytesPerUser {
                for (owner, growth) in state.growth(saving: saves, deleting: deletes) where growth > 0 {
                    if state.usedBytes(of: owner) + growth > quota { throw CloudError.quotaExceeded }
                }
            }
            var result = CloudModifyResult()
            let zones = Set(saves.map(\.id.zone)).union(deletes.map(\.zone))
            for zoneID in zones.sorted(by: { $0.description < $1.description }) {
                let zoneSaves = saves.filter { $0.id.zone == zoneID }
                let zoneDeletes = deletes.filter { $0.zone == zoneID }
                let failures = Self.check(zoneSaves, zoneDeletes, in: zoneID, state: state, user: user, scope: scope)
                if !failures.isEmpty {
                    // Atomic per zone: one failure fails the rest, and nothing changes.
                    for record in zoneSaves {
                        result.saveResults[record.id] = .failure(failures[record.id] ?? .batchRequestFailed(record.id))
                    }
                    for id in zoneDeletes {
                        result.deleteResults[id] = .failure(failures[id] ?? .batchRequestFailed(id))
                    }
                    continue
                }
                Self.apply(zoneSaves, zoneDeletes, in: zoneID, state: &state)
                let zone = state.zones[zoneID]
                for record in zoneSaves {
                    if let stored = zone?.records[record.id.name] { result.saveResults[record.id] = .success(stored.record) }
                }
                for id in zoneDeletes { result.deleteResults[id] = .success(()) }
            }
            return result
        }
    }

    /// The failures of one zone's operations, checked against the zone as it would be after
    /// all of them.
    private static func check(
        _ saves: [CloudRecord], _ deletes: [CloudRecordID], in zoneID: CloudZoneID,
        state: MockCloudState, user: String, scope: CloudDatabaseScope
    ) -> [CloudRecordID: CloudError] {
        var failures: [CloudRecordID: CloudError] = [:]
        guard state.canAccess(zoneID, user: user, scope: scope) else {
            for id in saves.map(\.id) + deletes { failures[id] = .permissionFailure(id) }
            return failures
        }
        guard let zone = state.zones[zoneID] else {
            for id in saves.map(\.id) + deletes { failures[id] = .zoneNotFound(zoneID) }
            return failures
        }
        let deleted = ExactNames(deletes.map(\.name))
        if scope == .shared {
            // A participant needs write permission on the share each record is (or would be)
            // under, with the request's own saves applied.
            let pendingParents = ExactKeyed(saves.map { ($0.id.name, $0.parent) }, uniquingKeysWith: { $1 })
            let after: (String) -> CloudRecordID? = { name in
                if let pending = pendingParents[name] { return pending }
                return zone.records[name]?.record.parent
            }
            let before: (String) -> CloudRecordID? = { zone.records[$0]?.record.parent }
            failures = CloudSharingRules.participantFailures(
                saving: saves, deleting: deletes,
                exists: { zone.records[$0] != nil },
                isSharedRoot: { state.shares[CloudRecordID(name: $0, zone: zoneID)] != nil },
                rootBefore: { state.sharedRoot(of: $0, in: zoneID, parentOf: before)?.name },
                rootAfter: { state.sharedRoot(of: $0, in: zoneID, parentOf: after)?.name },
                canWrite: { root in
                    state.shares[CloudRecordID(name: root, zone: zoneID)].map { $0.share.permission(of: user) >= .readWrite } ?? false
                })
            if !failures.isEmpty { return failures }
        }
        let named = ExactNames(
            saves.map(\.id.name) + deletes.map(\.name) + saves.compactMap { $0.parent?.zone == zoneID ? $0.parent?.name : nil })
        var existing = ExactKeyed<CloudRecord>()
        for name in named { existing[name] = zone.records[name]?.record }
        // Only a delete needs the zone's children, and reading them is a pass over the zone.
        let children =
            deleted.isEmpty
            ? []
            : zone.records.values.compactMap { stored -> (name: String, parent: String)? in
                guard let parent = stored.record.parent, parent.zone == zoneID, deleted.contains(parent.name) else { return nil }
                return (stored.record.id.name, parent.name)
            }
        var removed = ExactKeyed<[String: HybridTimestamp]>()
        for record in saves where existing[record.id.name] == nil {
            removed[record.id.name] = zone.tombstones[record.id.name]?.fieldVersions
        }
        failures = CloudModifyRules.failures(
            saving: saves, deleting: deletes, in: zoneID, existing: existing, deleted: removed, children: children)
        return failures
    }

    /// Applies a zone's checked operations: new change tags, tombstones for deletes, and a new
    /// tag for every parent that gained a child (as the service does). A save that moves a
    /// record under another share (or out of one) moves its subtree with it: the new share's
    /// participants get the subtree whole, the old share's see it go.
    private static func apply(_ saves: [CloudRecord], _ deletes: [CloudRecordID], in zoneID: CloudZoneID, state: inout MockCloudState) {
        // Out of the state while it changes: a zone shared with the state (or a snapshot of its
        // records) copied all its records on the first write, a cost per request that grew
        // with the zone.
        guard var zone = state.zones.removeValue(forKey: zoneID) else { return }
        defer {
            zone.lastChange = state.sequence
            state.zones[zoneID] = zone
        }
        // The zone as it was before the request: what it holds now, and what the request
        // deleted.
        var deletedHere = ExactKeyed<CloudRecord>()
        func recordBefore(_ name: String) -> CloudRecord? { deletedHere[name] ?? zone.records[name]?.record }
        let audiences = deletes.map { id in
            state.audience(of: state.sharedRoot(of: id.name, in: zoneID) { recordBefore($0)?.parent })
        }
        for (id, audience) in zip(deletes, audiences) {
            guard let removed = zone.removeRecord(named: id.name) else { continue }
            deletedHere[id.name] = removed.record
            zone.tombstones[id.name] = MockCloudState.Tombstone(
                type: removed.record.type, sequence: state.nextSequence(), audience: audience,
                fieldVersions: removed.record.fieldVersions)
            zone.departures[id.name] = nil
        }
        // Deleting a shared root ends its share, for everyone.
        for id in deletes {
            guard let ended = state.shares.removeValue(forKey: id) else { continue }
            state.recordRevocations(in: zoneID, formerParticipants: Set(ended.share.participants.map(\.user)))
        }
        let moved = saves.filter { save in recordBefore(save.id.name).map { $0.parent != save.parent } ?? false }.map(\.id.name)
        let rootsBefore = moved.map { state.sharedRoot(of: $0, in: zoneID) { recordBefore($0)?.parent } }
        // Parents that gained a child get a new tag before the saves, so the feed lists them
        // before their new children (as the store does); a parent saved here gets its tag from
        // its save.
        let savedNames = ExactNames(saves.map(\.id.name))
        for parent in Set(saves.compactMap(\.parent)).filter({ !savedNames.contains($0.name) }).sorted(by: { $0.name < $1.name }) {
            guard zone.records[parent.name] != nil else { continue }
            let tag = state.newTag()
            zone.resequence(parent.name, to: state.nextSequence(), changeTag: tag)
        }
        for var record in saves {
            record.changeTag = state.newTag()
            zone.store(record, sequence: state.nextSequence())
            zone.tombstones[record.id.name] = nil
        }
        for (name, rootBefore) in zip(moved, rootsBefore) {
            let rootAfter = state.sharedRoot(of: name, in: zoneID) { zone.records[$0]?.record.parent }
            guard rootAfter != rootBefore else { continue }
            for member in state.subtree(of: name, in: zone) where !member.hasSameBytes(as: name) {
                zone.resequence(member, to: state.nextSequence())
            }
            zone.lastChange = state.sequence
            state.zones[zoneID] = zone
            state.recordDepartures(
                under: name, in: zoneID, audience: state.audience(of: rootBefore).subtracting(state.audience(of: rootAfter)))
            zone = state.zones.removeValue(forKey: zoneID) ?? zone
        }
    }

    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        let (user, scope) = (user, scope)
        return try cloud.serve(.fetchDatabaseChanges, user: user) { state in
            try Self.databaseChanges(since: token, user: user, scope: scope, in: state)
        }
    }

    /// One request, as the service's: counted and faulted as a `fetchDatabaseChanges`, and
    /// its pages read from the same state as the list.
    func fetchDatabaseChanges(since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]) async throws -> CloudDatabaseChanges {
        guard firstPages.count <= CloudZonePageRequest.maximumPerRequest else { throw CloudError.limitExceeded }
        let (user, scope) = (user, scope)
        return try cloud.serve(.fetchDatabaseChanges, user: user) { state in
            var changes = try Self.databaseChanges(since: token, user: user, scope: scope, in: state)
            let changed = Set(changes.changedZones)
            var asked = Set<CloudZoneID>()
            // A zone asked for twice is read from its first request only, given or not.
            for request in firstPages where asked.insert(request.zone).inserted && changed.contains(request.zone) {
                // A page the cloud cannot give is left out; the caller meets its error when it
                // fetches the zone.
                guard
                    let page = try? Self.zonePage(
                        request.zone, since: request.since, limit: request.limit, plannedPages: request.boundedPlannedPages, user: user,
                        scope: scope, in: state)
                else { continue }
                changes.firstPages[request.zone] = page
            }
            return changes
        }
    }

    private static func databaseChanges(
        since token: CloudChangeToken?, user: String, scope: CloudDatabaseScope, in state: MockCloudState
    ) throws -> CloudDatabaseChanges {
        let start = try Self.position(of: token, prefix: "d")
        let gained = Set(state.shares.values.filter { ($0.accessChanged[user] ?? 0) > start }.map(\.share.rootRecordID.zone))
        let changed = state.zones.filter {
            ($0.value.lastChange > start || gained.contains($0.key)) && state.canAccess($0.key, user: user, scope: scope)
        }
        .map(\.key).sorted { $0.description < $1.description }
        let deleted: [CloudZoneID]
        switch scope {
        case .private:
            deleted = state.deletedZones.filter { $0.value > start && $0.key.owner == user }.map(\.key)
                .sorted { $0.description < $1.description }
        case .shared:
            let visible = state.sharedZones(of: user)
            deleted = (state.revokedZones[user] ?? [:]).filter { $0.value > start && !visible.contains($0.key) }.map(\.key)
                .sorted { $0.description < $1.description }
        }
        return CloudDatabaseChanges(changedZones: changed, deletedZones: deleted, token: CloudChangeToken("d:\(state.sequence)"))
    }

    func fetchZoneChanges(_ zoneID: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        let (user, scope) = (user, scope)
        return try cloud.serve(.fetchZoneChanges, user: user) { state in
            try Self.zonePage(zoneID, since: token, limit: limit, plannedPages: 0, user: user, scope: scope, in: state)
        }
    }

    func fetchArrivingZoneChanges(
        _ zoneID: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        let (user, scope) = (user, scope)
        let planned = CloudZonePageRequest.bounded(plannedPages: plannedPages)
        return ArrivingZoneChanges(
            try cloud.serve(.fetchZoneChanges, user: user) { state in
                try Self.zonePage(zoneID, since: token, limit: limit, plannedPages: planned, user: user, scope: scope, in: state)
            })
    }

    /// - Parameter plannedPages: how many starts of pages after the next one to plan
    ///   (``CloudZoneChanges/followingTokens``): in the private database only, each after
    ///   `limit` more changes, and only where a change comes after it.
    private static func zonePage(
        _ zoneID: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int, user: String, scope: CloudDatabaseScope,
        in state: MockCloudState
    ) throws -> CloudZoneChanges {
        guard state.canAccess(zoneID, user: user, scope: scope) else { throw CloudError.permissionFailure(nil) }
        guard let zone = state.zones[zoneID] else { throw CloudError.zoneNotFound(zoneID) }
        let issued = try ZoneFeedToken(token)
        let (start, tokenAccess) = (issued.position, issued.access)
        if token != nil && issued.hasExpired(zoneHorizon: zone.horizon) { throw CloudError.changeTokenExpired }
        enum Change { case saved(CloudRecord), deleted(CloudTombstone) }
        let records = zone.records
        let snapshot = state
        let visible: (String) -> Bool = { name in
            scope == .private
                || snapshot.permission(of: user, for: name, in: zoneID, scope: scope) { records[$0]?.record.parent } > .none
        }
        // A participant who gained access after the token was issued sees the whole share
        // again: the token carries the access it was issued under.
        let access =
            scope == .private
            ? 0
            : snapshot.shares.values.filter { $0.share.rootRecordID.zone == zoneID }
                .map { $0.accessChanged[user] ?? 0 }.max() ?? 0
        let since = tokenAccess < access ? 0 : start
        // Deletions and departures are few: listed whole. Records come from the feed in
        // order, as many as the page takes.
        var others: [(Int64, Change)] = zone.tombstones.filter { name, tombstone in
            tombstone.sequence > start && (scope == .private || tombstone.audience.contains(user))
        }.map { name, tombstone in
            (tombstone.sequence, .deleted(CloudTombstone(id: CloudRecordID(name: name, zone: zoneID), type: tombstone.type)))
        }
        if scope == .shared {
            // Records that left this participant's view stay in the zone, but are gone
            // for them.
            others += zone.departures.filter { name, departure in
                departure.sequence > start && departure.audience.contains(user)
                    && zone.tombstones[name] == nil && !visible(name)
            }.map { name, departure in
                (departure.sequence, .deleted(CloudTombstone(id: CloudRecordID(name: name, zone: zoneID), type: departure.type)))
            }
        }
        others.sort { $0.0 < $1.0 }
        let entries = zone.feed.entries
        var position = zone.feed.firstPosition(after: since)
        func nextRecord() -> (Int64, CloudRecord)? {
            while position < entries.count {
                let entry = entries[position]
                position += 1
                if entry.isLive, visible(entry.name), let stored = zone.records[entry.name] {
                    return (entry.sequence, stored.record)
                }
            }
            return nil
        }
        var page: [(Int64, Change)] = []
        var nextOther = 0
        var pendingRecord = nextRecord()
        while page.count < max(1, limit) {
            let other = nextOther < others.count ? others[nextOther] : nil
            if let record = pendingRecord, other.map({ record.0 < $0.0 }) ?? true {
                page.append((record.0, .saved(record.1)))
                pendingRecord = nextRecord()
            } else if let other {
                page.append(other)
                nextOther += 1
            } else {
                break
            }
        }
        var remaining = others.count - nextOther
        if pendingRecord != nil {
            remaining +=
                1
                + (scope == .private
                    ? zone.feed.liveCount(from: position)
                    : entries[position...].lazy.filter { $0.isLive && visible($0.name) }.count)
        }
        let moreComing = remaining > 0
        let end = moreComing ? (page.last?.0 ?? start) : max(start, zone.lastChange, zone.horizon)
        // The starts of the pages after the next one: the merge goes on past this page, and
        // every `limit`-th change after it ends a page, when another change follows it.
        var following: [CloudChangeToken] = []
        if scope == .private && moreComing && plannedPages > 0 {
            var counted = 0
            var boundary: Int64?
            while following.count < plannedPages {
                let other = nextOther < others.count ? others[nextOther] : nil
                let sequence: Int64
                if let record = pendingRecord, other.map({ record.0 < $0.0 }) ?? true {
                    sequence = record.0
                    pendingRecord = nextRecord()
                } else if let other {
                    sequence = other.0
                    nextOther += 1
                } else {
                    break
                }
                if let reached = boundary {
                    following.append(ZoneFeedToken(position: reached, access: access, horizon: zone.horizon).token)
                    boundary = nil
                }
                counted += 1
                if counted == max(1, limit) {
                    boundary = sequence
                    counted = 0
                }
            }
        }
        var result = CloudZoneChanges(
            changed: [], deleted: [], token: ZoneFeedToken(position: end, access: access, horizon: zone.horizon).token,
            moreComing: moreComing,
            remainingEstimate: remaining, followingTokens: following)
        for (_, change) in page {
            switch change {
            case .saved(let record): result.changed.append(record)
            case .deleted(let tombstone): result.deleted.append(tombstone)
            }
        }
        return result
    }

    func saveShare(_ share: CloudShare) async throws -> CloudShare {
        let (user, scope) = (user, scope)
        try share.checkWrappedKeys()
        return try cloud.serve(.saveShare, user: user, from: container.id) { state in
            let root = share.rootRecordID
            guard scope == .private, root.zone.owner == user else { throw CloudError.permissionFailure(root) }
            guard state.zones[root.zone]?.records[root.name] != nil else { throw CloudError.unknownItem(root) }
            var stored = state.shares[root] ?? MockCloudState.StoredShare(share: CloudShare(rootRecordID: root))
            let before = Set(stored.share.participants.filter { stored.share.permission(of: $0.user) > .none }.map(\.user))
            var saved = share
            saved.participants = CloudSharingRules.savedParticipants(of: share, owner: user) {
                stored.share.participant($0)?.acceptance
            }
            saved.changeTag = state.newTag()
            saved.currentUser = nil
            stored.share = saved
            state.shares[root] = stored
            state.recordRevocations(in: root.zone, formerParticipants: before)
            state.recordDepartures(under: root.name, in: root.zone, audience: before.subtracting(state.audience(of: root)))
            if var zone = state.zones[root.zone] {
                zone.lastChange = state.nextSequence()
                state.zones[root.zone] = zone
            }
            return state.named(saved, for: user).seen(by: user)
        }
    }

    func fetchShare(rootRecordID root: CloudRecordID) async throws -> CloudShare {
        let (user, scope) = (user, scope)
        return try cloud.serve(.fetchShare, user: user) { state in
            guard let stored = state.shares[root], state.canAccess(root.zone, user: user, scope: scope),
                stored.share.permission(of: user) > .none
            else { throw CloudError.unknownItem(root) }
            return state.named(stored.share, for: user).seen(by: user)
        }
    }

    func deleteShare(rootRecordID root: CloudRecordID) async throws {
        let (user, scope) = (user, scope)
        try cloud.serve(.deleteShare, user: user, from: container.id) { state in
            guard var stored = state.shares[root] else { return }
            switch scope {
            case .private:
                guard root.zone.owner == user else { throw CloudError.permissionFailure(root) }
                let audience = state.audience(of: root)
                state.shares[root] = nil
                state.recordRevocations(in: root.zone, formerParticipants: Set(stored.share.participants.map(\.user)))
                state.recordDepartures(under: root.name, in: root.zone, audience: audience)
            case .shared:
                guard let index = stored.share.participants.firstIndex(where: { $0.user == user }) else {
                    throw CloudError.unknownItem(root)
                }
                stored.share.participants[index].acceptance = .removed
                stored.share.changeTag = state.newTag()
                state.shares[root] = stored
                state.recordRevocations(in: root.zone, formerParticipants: [user])
                state.recordDepartures(under: root.name, in: root.zone, audience: [user])
            }
        }
    }

    /// The sequence position a token encodes.
    private static func position(of token: CloudChangeToken?, prefix: String) throws -> Int64 {
        guard let token else { return 0 }
        let parts = token.value.split(separator: ":")
        guard parts.count == 2, parts[0] == prefix, let position = Int64(parts[1]) else { throw CloudError.changeTokenExpired }
        return position
    }

    func missingAssets(_ hashes: [String]) async throws -> Set<String> {
        let user = user
        return try cloud.serve(.missingAssets, user: user) { state in
            Set(hashes.filter { !state.canRead(asset: $0, user: user) })
        }
    }

    func uploadAssets(_ assets: [CloudAsset]) async throws {
        try cloud.serve(.uploadAssets, user: user, from: container.id) { state in
            for asset in assets {
                if let damage = asset.damage { throw CloudError.invalidAsset(asset.hash, reason: damage) }
            }
            for asset in assets where !state.canRead(asset: asset.hash, user: user) {
                // Content another user uploaded is kept once; this user now holds it too.
                if state.assets[asset.hash] == nil { state.assets[asset.hash] = asset }
                state.assetUploaders[asset.hash, default: []].insert(user)
                state.assetUploads[asset.hash, default: 0] += 1
            }
        }
    }

    func fetchAsset(_ hash: String) async throws -> CloudAsset {
        let user = user
        return try cloud.serve(.fetchAsset, user: user) { state in
            guard let asset = state.assets[hash], state.canRead(asset: hash, user: user) else { throw CloudError.assetNotFound(hash) }
            return asset
        }
    }
}
