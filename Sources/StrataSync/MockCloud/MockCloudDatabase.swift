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
                state.grants[zone] = nil
            }
        }
    }

    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        let (user, scope, limits) = (user, scope, cloud.limits)
        return try cloud.serve(.fetchRecords, user: user) { state in
            guard ids.count <= limits.maximumItemsPerRequest else { throw CloudError.limitExceeded }
            var results: [CloudRecordID: Result<CloudRecord, CloudError>] = [:]
            for id in ids {
                if !state.canAccess(id.zone, user: user, scope: scope) {
                    results[id] = .failure(.permissionFailure(id))
                } else if let zone = state.zones[id.zone] {
                    results[id] = zone.records[id.name].map { .success($0.record) } ?? .failure(.unknownItem(id))
                } else {
                    results[id] = .failure(.zoneNotFound(id.zone))
                }
            }
            return results
        }
    }

    func modifyRecords(saving saves: [CloudRecord], deleting deletes: [CloudRecordID]) async throws -> CloudModifyResult {
        let (user, scope, limits) = (user, scope, cloud.limits)
        return try cloud.serve(.modifyRecords, user: user, from: container.id) { state in
            guard saves.count + deletes.count <= limits.maximumItemsPerRequest,
                  saves.reduce(0, { $0 + $1.encodedSize }) <= limits.maximumBytesPerRequest
            else { throw CloudError.limitExceeded }
            state.modifyRequestSizes.append(saves.count + deletes.count)
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
        let deleted = Set(deletes.map(\.name))
        let saved = Set(saves.map(\.id.name))
        for record in saves {
            let existing = zone.records[record.id.name]?.record
            switch (record.changeTag, existing) {
            case (nil, let existing?):
                failures[record.id] = .serverRecordChanged(existing)
            case (let tag?, nil):
                _ = tag
                failures[record.id] = .unknownItem(record.id)
            case (let tag?, let existing?) where existing.changeTag != tag:
                failures[record.id] = .serverRecordChanged(existing)
            default:
                break
            }
            if failures[record.id] == nil, let parent = record.parent {
                let parentStays = parent.zone == zoneID && !deleted.contains(parent.name)
                    && (zone.records[parent.name] != nil || saved.contains(parent.name))
                if !parentStays { failures[record.id] = .referenceViolation(record.id) }
            }
        }
        for id in deletes {
            let childStays = zone.records.values.contains { stored in
                stored.record.parent == id && !deleted.contains(stored.record.id.name)
                    && (saves.first { $0.id.name == stored.record.id.name }.map { $0.parent == id } ?? true)
            } || saves.contains { $0.parent == id }
            if childStays { failures[id] = .referenceViolation(id) }
        }
        return failures
    }

    /// Applies a zone's checked operations: new change tags, tombstones for deletes, and a new
    /// tag for every parent that gained a child (as the service does).
    private static func apply(_ saves: [CloudRecord], _ deletes: [CloudRecordID], in zoneID: CloudZoneID, state: inout MockCloudState) {
        guard var zone = state.zones[zoneID] else { return }
        for id in deletes {
            guard let removed = zone.records.removeValue(forKey: id.name) else { continue }
            zone.tombstones[id.name] = MockCloudState.Tombstone(type: removed.record.type, sequence: state.nextSequence())
        }
        for var record in saves {
            record.changeTag = state.newTag()
            zone.records[record.id.name] = MockCloudState.StoredRecord(record: record, sequence: state.nextSequence())
            zone.tombstones[record.id.name] = nil
        }
        for parent in Set(saves.compactMap(\.parent)).sorted(by: { $0.name < $1.name }) {
            guard var stored = zone.records[parent.name] else { continue }
            stored.record.changeTag = state.newTag()
            stored.sequence = state.nextSequence()
            zone.records[parent.name] = stored
        }
        zone.lastChange = state.sequence
        state.zones[zoneID] = zone
    }

    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        let (user, scope) = (user, scope)
        return try cloud.serve(.fetchDatabaseChanges, user: user) { state in
            let start = try Self.position(of: token, prefix: "d")
            let changed = state.zones.filter { $0.value.lastChange > start && state.canAccess($0.key, user: user, scope: scope) }
                .map(\.key).sorted { $0.description < $1.description }
            let deleted = state.deletedZones.filter { $0.value > start && $0.key.owner == user && scope == .private }
                .map(\.key).sorted { $0.description < $1.description }
            return CloudDatabaseChanges(changedZones: changed, deletedZones: deleted, token: CloudChangeToken("d:\(state.sequence)"))
        }
    }

    func fetchZoneChanges(_ zoneID: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        let (user, scope) = (user, scope)
        return try cloud.serve(.fetchZoneChanges, user: user) { state in
            guard state.canAccess(zoneID, user: user, scope: scope) else { throw CloudError.permissionFailure(nil) }
            guard let zone = state.zones[zoneID] else { throw CloudError.zoneNotFound(zoneID) }
            let start = try Self.position(of: token, prefix: "z")
            if token != nil && start < zone.horizon { throw CloudError.changeTokenExpired }
            enum Change { case saved(CloudRecord), deleted(CloudTombstone) }
            var changes: [(Int64, Change)] = zone.records.values.filter { $0.sequence > start }.map { ($0.sequence, .saved($0.record)) }
            changes += zone.tombstones.filter { $0.value.sequence > start }.map { name, tombstone in
                (tombstone.sequence, .deleted(CloudTombstone(id: CloudRecordID(name: name, zone: zoneID), type: tombstone.type)))
            }
            changes.sort { $0.0 < $1.0 }
            let page = changes.prefix(max(1, limit))
            let moreComing = changes.count > page.count
            let end = moreComing ? (page.last?.0 ?? start) : max(start, zone.lastChange, zone.horizon)
            var result = CloudZoneChanges(changed: [], deleted: [], token: CloudChangeToken("z:\(end)"), moreComing: moreComing)
            for (_, change) in page {
                switch change {
                case .saved(let record): result.changed.append(record)
                case .deleted(let tombstone): result.deleted.append(tombstone)
                }
            }
            return result
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
        try cloud.serve(.missingAssets, user: user) { state in
            Set(hashes.filter { state.assets[$0] == nil })
        }
    }

    func uploadAssets(_ assets: [CloudAsset]) async throws {
        try cloud.serve(.uploadAssets, user: user, from: container.id) { state in
            for asset in assets {
                let total = asset.chunks.reduce(Int64(0)) { $0 + $1.size }
                guard total == asset.size else { throw CloudError.invalidAsset(asset.hash, reason: "chunk sizes add up to \(total), not \(asset.size)") }
                for (index, chunk) in asset.chunks.enumerated() where CRC32.checksum(index: index, data: chunk.data) != chunk.crc32 {
                    throw CloudError.invalidAsset(asset.hash, reason: "chunk \(index) fails its CRC-32")
                }
            }
            for asset in assets where state.assets[asset.hash] == nil {
                state.assets[asset.hash] = asset
                state.assetUploads[asset.hash, default: 0] += 1
            }
        }
    }

    func fetchAsset(_ hash: String) async throws -> CloudAsset {
        try cloud.serve(.fetchAsset, user: user) { state in
            guard let asset = state.assets[hash] else { throw CloudError.assetNotFound(hash) }
            return asset
        }
    }
}
