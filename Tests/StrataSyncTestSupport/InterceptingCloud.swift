import Foundation
import StrataSync

/// A container over another (a `MockCloud`'s) whose private database's modify requests pass
/// through `modify` first (and its zone fetches through `fetchZone`, when given; the shared
/// database's too with `interceptsSharedDatabase`): a test answers them itself, delays them or
/// blocks them.
package struct InterceptingContainer: CloudContainerWrapping {
    package typealias Modify =
        @Sendable (
            _ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase
        ) async throws -> CloudModifyResult
    package typealias FetchZone =
        @Sendable (
            _ zone: CloudZoneID, _ token: CloudChangeToken?, _ limit: Int, _ next: any CloudDatabase
        ) async throws -> CloudZoneChanges
    package typealias FetchArriving =
        @Sendable (
            _ zone: CloudZoneID, _ token: CloudChangeToken?, _ limit: Int, _ next: any CloudDatabase
        ) async throws -> ArrivingZoneChanges

    package let base: any CloudContainer
    package let modify: Modify
    package var fetchZone: FetchZone? = nil
    /// Answers the zone fetches that hand a page over before its records are read.
    package var fetchArriving: FetchArriving? = nil
    /// Whether the shared database's requests pass through `modify` and `fetchZone` too.
    package var interceptsSharedDatabase = false

    package init(
        base: any CloudContainer, modify: @escaping Modify, fetchZone: FetchZone? = nil, fetchArriving: FetchArriving? = nil,
        interceptsSharedDatabase: Bool = false
    ) {
        self.base = base
        self.modify = modify
        self.fetchZone = fetchZone
        self.fetchArriving = fetchArriving
        self.interceptsSharedDatabase = interceptsSharedDatabase
    }

    package var wrappedContainer: any CloudContainer { base }
    package var identifier: String { base.identifier }
    package func accountStatus() async throws -> CloudAccountStatus { try await base.accountStatus() }
    package func currentUser() async throws -> String { try await base.currentUser() }
    package var privateDatabase: any CloudDatabase {
        InterceptingDatabase(base: base.privateDatabase, modify: modify, fetchZone: fetchZone, fetchArriving: fetchArriving)
    }
    package var sharedDatabase: any CloudDatabase {
        interceptsSharedDatabase
            ? InterceptingDatabase(base: base.sharedDatabase, modify: modify, fetchZone: fetchZone, fetchArriving: fetchArriving)
            : base.sharedDatabase
    }
    package func changeHints() -> AsyncStream<Void> { base.changeHints() }
    package func acceptShare(url: String) async throws -> CloudShare { try await base.acceptShare(url: url) }
    package func publishPublicKey(_ key: Data) async throws { try await base.publishPublicKey(key) }
    package func publicKeys(of users: [String]) async throws -> [String: Data] { try await base.publicKeys(of: users) }
    package func setUserProfile(_ profile: CloudUserProfile) async throws { try await base.setUserProfile(profile) }
    package func userProfile() async throws -> CloudUserProfile? { try await base.userProfile() }
}

package struct InterceptingDatabase: CloudDatabase {
    package let base: any CloudDatabase
    package let modify: InterceptingContainer.Modify
    package var fetchZone: InterceptingContainer.FetchZone? = nil
    package var fetchArriving: InterceptingContainer.FetchArriving? = nil

    package init(
        base: any CloudDatabase, modify: @escaping InterceptingContainer.Modify,
        fetchZone: InterceptingContainer.FetchZone? = nil, fetchArriving: InterceptingContainer.FetchArriving? = nil
    ) {
        self.base = base
        self.modify = modify
        self.fetchZone = fetchZone
        self.fetchArriving = fetchArriving
    }

    package var scope: CloudDatabaseScope { base.scope }
    package func saveZones(_ zones: [CloudZoneID]) async throws { try await base.saveZones(zones) }
    package func deleteZones(_ zones: [CloudZoneID]) async throws { try await base.deleteZones(zones) }
    package func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
        try await base.fetchRecords(ids)
    }
    /// The engine's key zone (end-to-end encryption's keys) passes straight through: tests
    /// intercept the synced records' requests, not the keyring's.
    package static let keyZone = "strata.keys"

    package func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
        if (saving.map(\.id.zone) + deleting.map(\.zone)).allSatisfy({ $0.name == Self.keyZone }) {
            return try await base.modifyRecords(saving: saving, deleting: deleting)
        }
        return try await modify(saving, deleting, base)
    }
    package func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
        try await base.fetchDatabaseChanges(since: token)
    }
    /// The base's first pages when no zone fetch is intercepted; none otherwise (a cloud may
    /// offer none), so that every page passes through `fetchZone` or `fetchArriving`.
    package func fetchDatabaseChanges(
        since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]
    ) async throws -> CloudDatabaseChanges {
        guard fetchZone == nil, fetchArriving == nil else {
            guard firstPages.count <= CloudZonePageRequest.maximumPerRequest else { throw CloudError.limitExceeded }
            return try await base.fetchDatabaseChanges(since: token)
        }
        return try await base.fetchDatabaseChanges(since: token, firstPages: firstPages)
    }
    package func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
        guard let fetchZone, zone.name != Self.keyZone else { return try await base.fetchZoneChanges(zone, since: token, limit: limit) }
        return try await fetchZone(zone, token, limit, base)
    }
    package func fetchArrivingZoneChanges(
        _ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int
    ) async throws -> ArrivingZoneChanges {
        if let fetchArriving, zone.name != Self.keyZone { return try await fetchArriving(zone, token, limit, base) }
        return ArrivingZoneChanges(try await fetchZoneChanges(zone, since: token, limit: limit))
    }
    package func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await base.missingAssets(hashes) }
    package func uploadAssets(_ assets: [CloudAsset]) async throws { try await base.uploadAssets(assets) }
    package func fetchAsset(_ hash: String) async throws -> CloudAsset { try await base.fetchAsset(hash) }
    package func saveShare(_ share: CloudShare) async throws -> CloudShare { try await base.saveShare(share) }
    package func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare {
        try await base.fetchShare(rootRecordID: rootRecordID)
    }
    package func deleteShare(rootRecordID: CloudRecordID) async throws { try await base.deleteShare(rootRecordID: rootRecordID) }
}
