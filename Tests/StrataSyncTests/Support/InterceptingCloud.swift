import Foundation
import StrataSync

/// A container over another (a `MockCloud`'s) whose private database's modify requests pass
/// through `modify` first (and its zone fetches through `fetchZone`, when given; the shared
/// database's too with `interceptsSharedDatabase`): a test answers them itself, delays them or
/// blocks them.
struct InterceptingContainer: CloudContainerWrapping {
    typealias Modify =
        @Sendable (
            _ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase
        ) async throws -> CloudModifyResult
    typealias FetchZone =
        @Sendable (
            _ zone: CloudZoneID, _ token: CloudChangeToken?, _ limit: Int, _ next: any CloudDatabase
        ) async throws -> CloudZoneChanges
    typealias FetchArriving =
        @Sendable (
            _ zone: CloudZoneID, _ token: CloudChangeToken?, _ limit: Int, _ next: any CloudDatabase
        ) async throws -> ArrivingZoneChanges

    let base: any CloudContainer
    let modify: Modify
    var fetchZone: FetchZone? = nil
    /// Answers the zone fetches that hand a page over before its records are read.
    var fetchArriving: FetchArriving? = nil
    /// Whether the shared database's requests pass through `modify` and `fetchZone` too.
    var interceptsSharedDatabase = false

    var wrappedContainer: any CloudContainer { base }
    var identifier: String { base.identifier }
    func accountStatus() async throws -> CloudAccountStatus { try await base.accountStatus() }
    func currentUser() async throws -> String { try await base.currentUser() }
    var privateDatabase: any CloudDatabase {
        InterceptingDatabase(base: base.privateDatabase, modify: modify, fetchZone: fetchZone, fetchArriving: fetchArriving)
    }
    var sharedDatabase: any CloudDatabase {
        interceptsSharedDatabase
            ? InterceptingDatabase(base: base.sharedDatabase, modify: modify, fetchZone: fetchZone, fetchArriving: fetchArriving)
            : base.sharedDatabase
    }
    func changeHints() -> AsyncStream<Void> { base.changeHints() }
    func acceptShare(url: String) async throws -> CloudShare { try await base.acceptShare(url: url) }
    func publishPublicKey(_ key: Data) async throws { try await base.publishPublicKey(key) }
    func publicKeys(of users: [String]) async throws -> [String: Data] { try await base.publicKeys(of: users) }
    func setUserProfile(_ profile: CloudUserProfile) async throws { try await base.setUserProfile(profile) }
    func userProfile() async throws -> CloudUserProfile? { try await base.userProfile() }
}

struct InterceptingDatabase: CloudDatabase {
    let base: any CloudDatabase
    let modify: InterceptingContainer.Modify
    var fetchZone: InterceptingContainer.FetchZone? = nil
    var fetchArriving: InterceptingContainer.FetchArriving? = nil

    var scope: CloudDatabaseScope { base.scope }
    func saveZones(_ zones: [CloudZoneID]) async throws { try await base.saveZones(zones) }
    func deleteZones(_ zones: [CloudZoneID]) async throws { try await base.deleteZones(zones) }
    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        try await base.fetchRecords(ids)
    }
    /// The engine's key zone (end-to-end encryption's keys) passes straight through: tests
    /// intercept the synced records' requests, not the keyring's.
    static let keyZone = "strata.keys"

    func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
        if (saving.map(\.id.zone) + deleting.map(\.zone)).allSatisfy({ $0.name == Self.keyZone }) {
            return try await base.modifyRecords(saving: saving, deleting: deleting)
        }
        return try await modify(saving, deleting, base)
    }
    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        try await base.fetchDatabaseChanges(since: token)
    }
    func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        guard let fetchZone, zone.name != Self.keyZone else { return try await base.fetchZoneChanges(zone, since: token, limit: limit) }
        return try await fetchZone(zone, token, limit, base)
    }
    func fetchArrivingZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> ArrivingZoneChanges {
        if let fetchArriving, zone.name != Self.keyZone { return try await fetchArriving(zone, token, limit, base) }
        return ArrivingZoneChanges(try await fetchZoneChanges(zone, since: token, limit: limit))
    }
    func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await base.missingAssets(hashes) }
    func uploadAssets(_ assets: [CloudAsset]) async throws { try await base.uploadAssets(assets) }
    func fetchAsset(_ hash: String) async throws -> CloudAsset { try await base.fetchAsset(hash) }
    func saveShare(_ share: CloudShare) async throws -> CloudShare { try await base.saveShare(share) }
    func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare { try await base.fetchShare(rootRecordID: rootRecordID) }
    func deleteShare(rootRecordID: CloudRecordID) async throws { try await base.deleteShare(rootRecordID: rootRecordID) }
}
