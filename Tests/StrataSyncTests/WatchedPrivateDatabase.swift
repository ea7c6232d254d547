import Foundation
import StrataSync
import Synchronization

/// What a watched container tells its watch: each call of its private database that a send
/// makes only when nothing travels (`note`), each modify, and the fetches of pages, which the
/// watch answers (all pass by unwatched unless a watch says otherwise). Calls to the key zone
/// (end-to-end encryption's own) pass unwatched. The outside reviews of requests travelling
/// together (`OutsideRequestsTogetherTests`, `OutsideBatchesInFlightTests`) and the tests of
/// planned pages each bring their watch.
protocol PrivateDatabaseWatch: Sendable {
    func note(_ call: String)
    func modify(_ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase) async throws -> CloudModifyResult
    /// A database's changes with the first pages asked for beside them (forwarded unless a
    /// watch answers them itself).
    func databaseChanges(
        since token: CloudChangeToken?, firstPages: [CloudZonePageRequest], _ next: any CloudDatabase
    ) async throws -> CloudDatabaseChanges
    /// A zone's page with its planned starts (forwarded unless a watch answers it itself).
    func arrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int, _ next: any CloudDatabase
    ) async throws -> ArrivingZoneChanges
}

extension PrivateDatabaseWatch {
    func note(_ call: String) {}

    func modify(_ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase) async throws -> CloudModifyResult {
        try await next.modifyRecords(saving: saving, deleting: deleting)
    }

    func databaseChanges(
        since token: CloudChangeToken?, firstPages: [CloudZonePageRequest], _ next: any CloudDatabase
    ) async throws -> CloudDatabaseChanges {
        try await next.fetchDatabaseChanges(since: token, firstPages: firstPages)
    }

    func arrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int, _ next: any CloudDatabase
    ) async throws -> ArrivingZoneChanges {
        try await next.fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: plannedPages)
    }
}

/// The key zone's name, whose calls no watch sees.
let watchedKeyZone = "strata.keys"

/// A container whose private database's calls pass by a ``PrivateDatabaseWatch``.
struct WatchedContainer<Watch: PrivateDatabaseWatch>: CloudContainerWrapping {
    let base: any CloudContainer
    let watch: Watch

    var wrappedContainer: any CloudContainer { base }
    var identifier: String { base.identifier }
    func accountStatus() async throws -> CloudAccountStatus { try await base.accountStatus() }
    func currentUser() async throws -> String { try await base.currentUser() }
    var privateDatabase: any CloudDatabase { WatchedDatabase(base: base.privateDatabase, watch: watch) }
    var sharedDatabase: any CloudDatabase { base.sharedDatabase }
    func changeHints() -> AsyncStream<Void> { base.changeHints() }
    func acceptShare(url: String) async throws -> CloudShare { try await base.acceptShare(url: url) }
    func publishPublicKey(_ key: Data) async throws { try await base.publishPublicKey(key) }
    func publicKeys(of users: [String]) async throws -> [String: Data] { try await base.publicKeys(of: users) }
    func setUserProfile(_ profile: CloudUserProfile) async throws { try await base.setUserProfile(profile) }
    func userProfile() async throws -> CloudUserProfile? { try await base.userProfile() }
}

/// A private database whose calls pass by a ``PrivateDatabaseWatch``.
struct WatchedDatabase<Watch: PrivateDatabaseWatch>: CloudDatabase {
    let base: any CloudDatabase
    let watch: Watch

    var scope: CloudDatabaseScope { base.scope }
    func saveZones(_ zones: [CloudZoneID]) async throws {
        if zones.contains(where: { $0.name != watchedKeyZone }) { watch.note("saveZones") }
        try await base.saveZones(zones)
    }
    func deleteZones(_ zones: [CloudZoneID]) async throws {
        watch.note("deleteZones")
        try await base.deleteZones(zones)
    }
    func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        try await base.fetchRecords(ids)
    }
    func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
        if (saving.map(\.id.zone) + deleting.map(\.zone)).allSatisfy({ $0.name == watchedKeyZone }) {
            return try await base.modifyRecords(saving: saving, deleting: deleting)
        }
        return try await watch.modify(saving, deleting, base)
    }
    func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        watch.note("fetchDatabaseChanges")
        return try await base.fetchDatabaseChanges(since: token)
    }
    func fetchDatabaseChanges(
        since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]
    ) async throws
        -> CloudDatabaseChanges
    {
        watch.note("fetchDatabaseChanges")
        return try await watch.databaseChanges(since: token, firstPages: firstPages, base)
    }
    func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        if zone.name != watchedKeyZone { watch.note("fetchZoneChanges") }
        return try await base.fetchZoneChanges(zone, since: token, limit: limit)
    }
    func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        if zone.name != watchedKeyZone { watch.note("fetchArrivingZoneChanges") }
        return try await base.fetchArrivingZoneChanges(zone, since: token, limit: limit)
    }
    func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int, plannedPages: Int
    ) async throws
        -> ArrivingZoneChanges
    {
        guard zone.name != watchedKeyZone else {
            return try await base.fetchArrivingZoneChanges(zone, since: token, limit: limit, plannedPages: plannedPages)
        }
        watch.note("fetchArrivingZoneChanges")
        return try await watch.arrivingZoneChanges(zone, since: token, limit: limit, plannedPages: plannedPages, base)
    }
    func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await base.missingAssets(hashes) }
    func uploadAssets(_ assets: [CloudAsset]) async throws { try await base.uploadAssets(assets) }
    func fetchAsset(_ hash: String) async throws -> CloudAsset { try await base.fetchAsset(hash) }
    func saveShare(_ share: CloudShare) async throws -> CloudShare { try await base.saveShare(share) }
    func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare { try await base.fetchShare(rootRecordID: rootRecordID) }
    func deleteShare(rootRecordID: CloudRecordID) async throws { try await base.deleteShare(rootRecordID: rootRecordID) }
}

/// A one-shot signal a request waits on, for a bounded time.
final class WatchSignal: Sendable {
    private struct State {
        var fired = false
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var abandoned: Set<Int> = []
        var nextID = 0
    }
    private let state = Mutex(State())

    var fired: Bool { state.withLock { $0.fired } }

    func fire() {
        let waiting = state.withLock { state in
            state.fired = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in waiting { waiter.resume() }
    }

    /// Waits until fired or until `bound` passed (a bound, not a wait for work: it only
    /// runs out when what the test waits for never comes); whether it fired.
    @discardableResult
    func wait(bound: Duration) async -> Bool {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let resumeNow = self.state.withLock { state -> Bool in
                        if state.fired || state.abandoned.contains(id) { return true }
                        state.waiting[id] = continuation
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: bound)
                return false
            }
            _ = await group.next()
            group.cancelAll()
            let left = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if let waiter = state.waiting.removeValue(forKey: id) { return waiter }
                state.abandoned.insert(id)
                return nil
            }
            left?.resume()
            await group.waitForAll()
            return fired
        }
    }
}
