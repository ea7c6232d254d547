import Foundation
import StrataCloud

/// The container the engine was given, called with the engine's mark (``SyncEngine/isSynchronizing``)
/// cleared.
///
/// The mark is a task-local, and task-locals flow into every call and every `Task { }` the
/// callee starts. A container of the app's own (one that logs, counts or audits requests) runs
/// inside the engine's work; without this boundary a row it writes to a synced table would be
/// taken for one the engine merged, skipped by capture, and never sent. The engine's own
/// statements never run inside these calls, so clearing the mark here loses nothing.
///
/// Everything of the container's runs unmarked: its methods, its properties' getters (a
/// getter may start a task, which inherits the caller's task-locals), and the closures it hands
/// back, such as an arriving page's read (``ArrivingZoneChanges/changes()``), which the engine
/// calls later, inside its own work.
struct UnmarkedCloudContainer: CloudContainerWrapping {
    let base: any CloudContainer

    var wrappedContainer: any CloudContainer { base }
    var identifier: String { unmarked { base.identifier } }
    func accountStatus() async throws -> CloudAccountStatus { try await unmarked { try await base.accountStatus() } }
    func currentUser() async throws -> String { try await unmarked { try await base.currentUser() } }
    func account() async throws -> CloudAccount { try await unmarked { try await base.account() } }
    var privateDatabase: any CloudDatabase { UnmarkedCloudDatabase(base: unmarked { base.privateDatabase }) }
    var sharedDatabase: any CloudDatabase { UnmarkedCloudDatabase(base: unmarked { base.sharedDatabase }) }
    func changeHints() -> AsyncStream<Void> { unmarked { base.changeHints() } }
    func acceptShare(url: String) async throws -> CloudShare { try await unmarked { try await base.acceptShare(url: url) } }
    func publishPublicKey(_ key: Data) async throws { try await unmarked { try await base.publishPublicKey(key) } }
    func publicKeys(of users: [String]) async throws -> [String: Data] { try await unmarked { try await base.publicKeys(of: users) } }
    func setUserProfile(_ profile: CloudUserProfile) async throws { try await unmarked { try await base.setUserProfile(profile) } }
    func userProfile() async throws -> CloudUserProfile? { try await unmarked { try await base.userProfile() } }
}

/// One database of an ``UnmarkedCloudContainer``: every call outside the engine's mark.
struct UnmarkedCloudDatabase: CloudDatabase {
    let base: any CloudDatabase

    var scope: CloudDatabaseScope { unmarked { base.scope } }
    func saveZones(_ zones: [CloudZoneID]) async throws { try await unmarked { try await base.saveZones(zones) } }
    func deleteZones(_ zones: [CloudZoneID]) async throws { try await unmarked { try await base.deleteZones(zones) } }
    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        try await unmarked { try await base.fetchRecords(ids) }
    }
    func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
        try await unmarked { try await base.modifyRecords(saving: saving, deleting: deleting) }
    }
    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        try await unmarked { try await base.fetchDatabaseChanges(since: token) }
    }
    func fetchDatabaseChanges(since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]) async throws -> CloudDatabaseChanges {
        try await unmarked { try await base.fetchDatabaseChanges(since: token, firstPages: firstPages) }
    }
    func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        try await unmarked { try await base.fetchZoneChanges(zone, since: token, limit: limit) }
    }
    func fetchArrivingZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> ArrivingZoneChanges {
        try await fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: 0)
    }
    func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        let arrived = try await unmarked {
            try await base.fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: plannedPages)
        }
        return ArrivingZoneChanges(token: arrived.token, moreComing: arrived.moreComing, followingTokens: arrived.followingTokens) {
            try await unmarked { try await arrived.changes() }
        }
    }
    func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await unmarked { try await base.missingAssets(hashes) } }
    func uploadAssets(_ assets: [CloudAsset]) async throws { try await unmarked { try await base.uploadAssets(assets) } }
    func fetchAsset(_ hash: String) async throws -> CloudAsset { try await unmarked { try await base.fetchAsset(hash) } }
    func saveShare(_ share: CloudShare) async throws -> CloudShare { try await unmarked { try await base.saveShare(share) } }
    func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare {
        try await unmarked { try await base.fetchShare(rootRecordID: rootRecordID) }
    }
    func deleteShare(rootRecordID: CloudRecordID) async throws {
        try await unmarked { try await base.deleteShare(rootRecordID: rootRecordID) }
    }
}

/// Runs a call into the app's container with the engine's mark cleared.
private func unmarked<T: Sendable>(_ call: () async throws -> T) async throws -> T {
    try await SynchronizationContext.$isSynchronizing.withValue(false) { try await call() }
}

/// Reads a property of the app's container with the engine's mark cleared.
private func unmarked<T>(_ read: () -> T) -> T {
    SynchronizationContext.$isSynchronizing.withValue(false) { read() }
}
