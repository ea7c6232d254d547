import Foundation
import StrataCloud

/// A user's container seen through end-to-end encryption: records and assets are sealed on
/// their way out and opened on their way in, so the cloud behind it stores only ciphertext.
/// The engine talks to the cloud through it and never sees a sealed record.
struct EncryptedCloudContainer: CloudContainer {
    let base: any CloudContainer
    let keyring: Keyring

    var identifier: String { base.identifier }
    func accountStatus() async throws -> CloudAccountStatus { try await base.accountStatus() }
    func currentUser() async throws -> String { try await base.currentUser() }
    func account() async throws -> CloudAccount { try await base.account() }
    var privateDatabase: any CloudDatabase { EncryptedCloudDatabase(base: base.privateDatabase, keyring: keyring) }
    var sharedDatabase: any CloudDatabase { EncryptedCloudDatabase(base: base.sharedDatabase, keyring: keyring) }
    func changeHints() -> AsyncStream<Void> { base.changeHints() }
    func publishPublicKey(_ key: Data) async throws { try await base.publishPublicKey(key) }
    func publicKeys(of users: [String]) async throws -> [String: Data] { try await base.publicKeys(of: users) }
    func setUserProfile(_ profile: CloudUserProfile) async throws { try await base.setUserProfile(profile) }
    func userProfile() async throws -> CloudUserProfile? { try await base.userProfile() }

    /// Accepts the share at the URL's address; its link key, if any, stays on this device.
    func acceptShare(url: String) async throws -> CloudShare {
        let (address, link) = LinkKey.split(url)
        // Known to the directory before the owner's next save, which seals the keys to it.
        _ = try await keyring.identity(of: try await base.currentUser())
        let share = try await base.acceptShare(url: address)
        try await keyring.ingest(share, link: link)
        return share
    }
}

/// One database through end-to-end encryption (see ``EncryptedCloudContainer``).
///
/// A record that does not open (tampered with, moved, sealed with a retired key, or with a key
/// this device cannot get) is not dropped: it comes back still sealed, marked with
/// ``rejectionField`` naming the ``EncryptionError``, and the engine quarantines it.
struct EncryptedCloudDatabase: CloudDatabase {
    static let rejectionField = "strata.rejection"

    let base: any CloudDatabase
    let keyring: Keyring
    /// The zone whose key names and seals assets; set by ``assets(of:)``.
    var assetZone: CloudZoneID?

    var scope: CloudDatabaseScope { base.scope }

    /// This database with asset calls keyed for `zone`'s records.
    func assets(of zone: CloudZoneID) -> EncryptedCloudDatabase {
        var copy = self
        copy.assetZone = zone
        return copy
    }

    func saveZones(_ zones: [CloudZoneID]) async throws { try await base.saveZones(zones) }
    func deleteZones(_ zones: [CloudZoneID]) async throws { try await base.deleteZones(zones) }

    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        var results = try await base.fetchRecords(ids)
        var keys = KeysInUse()
        for (id, result) in results {
            guard case .success(let record) = result else { continue }
            results[id] = .success(try await openOrMark(record, candidates: [], keys: &keys))
        }
        return results
    }

    func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
        var sealed: [CloudRecord] = []
        sealed.reserveCapacity(saving.count)
        var keys: [CloudZoneID: ZoneKey] = [:]
        for record in saving {
            let zone = record.id.zone
            let key: ZoneKey
            if let known = keys[zone] {
                key = known
            } else {
                key = try await keyring.currentKey(for: zone)
                keys[zone] = key
            }
            sealed.append(try RecordSealing.seal(record, with: key))
        }
        var result = try await base.modifyRecords(saving: sealed, deleting: deleting)
        let plain = Dictionary(saving.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        var keysInUse = KeysInUse()
        for (id, answer) in result.saveResults {
            switch answer {
            case .success(let stored):
                // The server holds what was sent, with its new tag: the plaintext is at hand.
                guard var record = plain[id] else { continue }
                record.changeTag = stored.changeTag
                result.saveResults[id] = .success(record)
            case .failure(.serverRecordChanged(let server)):
                let opened = try await open(server, candidates: [], keys: &keysInUse)
                result.saveResults[id] = .failure(.serverRecordChanged(opened))
            case .failure: continue
            }
        }
        return result
    }

    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        withoutKeyZone(try await base.fetchDatabaseChanges(since: token))
    }

    /// The pages come opened as ``fetchZoneChanges(_:since:limit:)``'s do. A page that does not
    /// open (its zone's key has not reached this device) is left out, as the contract lets a
    /// cloud leave out any page: the engine fetches that zone as usual and meets the error.
    /// A failure a retry can fix (the key zone's fetch met a transient error) fails the call,
    /// as it would fail the zone's fetch.
    func fetchDatabaseChanges(since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]) async throws -> CloudDatabaseChanges {
        var changes = withoutKeyZone(try await base.fetchDatabaseChanges(since: token, firstPages: firstPages))
        let sealed = changes.firstPages
        changes.firstPages = [:]
        for (zone, page) in sealed where zone.name != Keyring.zoneName || scope != .private {
            do {
                changes.firstPages[zone] = try await open(page)
            } catch let error as CloudError where error.isTransient {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                continue
            }
        }
        return changes
    }

    /// The key zone is the keyring's, not a zone of synced records.
    private func withoutKeyZone(_ changes: CloudDatabaseChanges) -> CloudDatabaseChanges {
        guard scope == .private else { return changes }
        var changes = changes
        changes.changedZones.removeAll { $0.name == Keyring.zoneName }
        changes.deletedZones.removeAll { $0.name == Keyring.zoneName }
        return changes
    }

    func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        try await open(try await base.fetchZoneChanges(zone, since: token, limit: limit))
    }

    /// Hands the page over as the base does, its records opened when they are read.
    func fetchArrivingZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> ArrivingZoneChanges {
        try await fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: 0)
    }

    /// Hands the page over as the base does, with the starts it planned (tokens carry no
    /// record, so there is nothing of them to open).
    func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        let arriving = try await base.fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: plannedPages)
        return ArrivingZoneChanges(token: arriving.token, moreComing: arriving.moreComing, followingTokens: arriving.followingTokens) {
            try await open(try await arriving.changes())
        }
    }

    private func open(_ page: CloudZoneChanges) async throws -> CloudZoneChanges {
        var page = page
        // Records whose parent is not on the page may be the roots of shares carrying the key.
        let names = ExactNames(page.changed.map(\.id.name))
        let candidates = scope == .shared ? page.changed.filter { $0.parent.map { !names.contains($0.name) } ?? true }.map(\.id) : []
        var opened: [CloudRecord] = []
        opened.reserveCapacity(page.changed.count)
        var keys = KeysInUse()
        for record in page.changed { opened.append(try await openOrMark(record, candidates: candidates, keys: &keys)) }
        page.changed = opened
        return page
    }

    func missingAssets(_ hashes: [String]) async throws -> Set<String> {
        let key = try await keyring.currentKey(for: try zoneForAssets())
        var names: [String: String] = [:]
        for hash in hashes { names[AssetSealing.name(ofContent: hash, with: key)] = hash }
        let missing = try await base.missingAssets(Array(names.keys))
        return Set(missing.compactMap { names[$0] })
    }

    func uploadAssets(_ assets: [CloudAsset]) async throws {
        let key = try await keyring.currentKey(for: try zoneForAssets())
        try await base.uploadAssets(try assets.map { try AssetSealing.seal($0, with: key) })
    }

    /// The asset under each key version the zone had, newest first: content uploaded before
    /// a rotation keeps the name it had then.
    func fetchAsset(_ hash: String) async throws -> CloudAsset {
        let zone = try zoneForAssets()
        let current = try await keyring.currentKey(for: zone)
        var versions = [current.version]
        versions += (1..<max(current.version, 1)).reversed()
        for version in versions {
            let key = try await keyring.key(for: zone, version: version)
            let sealed: CloudAsset
            do {
                sealed = try await base.fetchAsset(AssetSealing.name(ofContent: hash, with: key))
            } catch CloudError.assetNotFound {
                continue
            }
            // Unsealed content under a keyed name is not what this device uploaded.
            guard sealed.isSealed || sealed.chunks.isEmpty else { throw EncryptionError.tamperedAsset(hash) }
            return try AssetSealing.open(sealed, hash: hash, with: key)
        }
        throw CloudError.assetNotFound(hash)
    }

    func saveShare(_ share: CloudShare) async throws -> CloudShare {
        let saved = try await base.saveShare(try await keyring.sealKeys(into: share))
        return saved
    }

    func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare {
        let share = try await base.fetchShare(rootRecordID: rootRecordID)
        try await keyring.ingest(share)
        return share
    }

    func deleteShare(rootRecordID: CloudRecordID) async throws { try await base.deleteShare(rootRecordID: rootRecordID) }

    // MARK: Opening

    private func zoneForAssets() throws -> CloudZoneID {
        guard let assetZone else {
            // A programming error inside the engine, reported rather than trapped.
            throw EncryptionError.missingZoneKey(CloudZoneID(name: "(no zone given for an asset call)", owner: ""), version: 0)
        }
        return assetZone
    }

    /// The keys one page's records were opened with, by zone and version.
    ///
    /// A page's records mostly share one key: looked up once a page, not once a record. Each
    /// lookup builds the zone's keys from the vault anew (every version, each key copied),
    /// which cost as much as the ChaCha20-Poly1305 opening itself.
    struct KeysInUse {
        private var keys: [CloudZoneID: [Int: ZoneKey]] = [:]

        subscript(zone: CloudZoneID, version: Int) -> ZoneKey? {
            get { keys[zone]?[version] }
            set { keys[zone, default: [:]][version] = newValue }
        }
    }

    private func open(_ record: CloudRecord, candidates: [CloudRecordID], keys: inout KeysInUse) async throws -> CloudRecord {
        guard let version = RecordSealing.keyVersion(of: record) else { throw EncryptionError.unsealedRecord(record.id) }
        let zone = record.id.zone
        let key: ZoneKey
        if let known = keys[zone, version] {
            key = known
        } else {
            key = try await keyring.key(for: zone, version: version, candidates: candidates)
            keys[zone, version] = key
        }
        return try RecordSealing.open(record, with: key)
    }

    /// The record opened, or marked for quarantine when the record itself is at fault
    /// (tampered with, unsealed, sealed with a retired key). Anything else — this device is
    /// not enrolled, a key it cannot get yet, the cloud or the key storage failing — is thrown:
    /// the page is not applied and its token not saved, so the records come again once the
    /// keys are here.
    private func openOrMark(_ record: CloudRecord, candidates: [CloudRecordID], keys: inout KeysInUse) async throws -> CloudRecord {
        do {
            return try await open(record, candidates: candidates, keys: &keys)
        } catch let error as EncryptionError {
            switch error {
            case .tamperedRecord, .unsealedRecord, .retiredKey:
                var marked = record
                marked.fields[Self.rejectionField] = .text(error.description)
                return marked
            default:
                throw error
            }
        }
    }
}
