import Foundation
import StrataCloud
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

/// A container of the app's own (one that logs, counts or audits requests) runs outside the
/// engine's mark: what it writes to a synced table is the app's, captured and sent like any
/// other write, whichever of its methods wrote it and however the engine reached it.
@Suite(.timeLimit(.minutes(5))) struct AppContainerCaptureTests {
    /// Where the auditing container writes its row.
    enum WritePoint: String, CaseIterable, Sendable {
        case account, modifyRecords, fetchDatabaseChanges, saveZones
        case taskStartedInAccount
    }

    /// Wraps a mock container; the first time the engine reaches `point`, writes a game row.
    final class AuditingContainer: CloudContainerWrapping {
        let base: any CloudContainer
        let database: DatabaseQueue
        let point: WritePoint
        let written: Mutex<Bool>

        init(base: any CloudContainer, database: DatabaseQueue, point: WritePoint) {
            self.base = base
            self.database = database
            self.point = point
            written = Mutex(false)
        }

        func reached(_ here: WritePoint) async throws {
            guard here == point,
                written.withLock({ flag in
                    defer { flag = true }; return !flag
                })
            else { return }
            try await database.write { db in
                try db.execute(sql: "INSERT INTO games (id, title) VALUES ('audit-\(here.rawValue)', 'written by the container')")
            }
        }

        var wrappedContainer: any CloudContainer { base }
        var identifier: String { base.identifier }
        func accountStatus() async throws -> CloudAccountStatus { try await base.accountStatus() }
        func currentUser() async throws -> String { try await base.currentUser() }
        func account() async throws -> CloudAccount {
            try await reached(.account)
            if point == .taskStartedInAccount, !written.withLock({ $0 }) {
                // A task the container starts inherits the caller's task-locals.
                try await Task { try await reached(.taskStartedInAccount) }.value
            }
            return try await base.account()
        }
        var privateDatabase: any CloudDatabase { AuditingDatabase(base: base.privateDatabase, container: self) }
        var sharedDatabase: any CloudDatabase { AuditingDatabase(base: base.sharedDatabase, container: self) }
        func changeHints() -> AsyncStream<Void> { base.changeHints() }
        func acceptShare(url: String) async throws -> CloudShare { try await base.acceptShare(url: url) }
        func publishPublicKey(_ key: Data) async throws { try await base.publishPublicKey(key) }
        func publicKeys(of users: [String]) async throws -> [String: Data] { try await base.publicKeys(of: users) }
        func setUserProfile(_ profile: CloudUserProfile) async throws { try await base.setUserProfile(profile) }
        func userProfile() async throws -> CloudUserProfile? { try await base.userProfile() }
    }

    struct AuditingDatabase: CloudDatabase {
        let base: any CloudDatabase
        let container: AuditingContainer

        var scope: CloudDatabaseScope { base.scope }
        func saveZones(_ zones: [CloudZoneID]) async throws {
            try await container.reached(.saveZones)
            try await base.saveZones(zones)
        }
        func deleteZones(_ zones: [CloudZoneID]) async throws { try await base.deleteZones(zones) }
        func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
            try await base.fetchRecords(ids)
        }
        func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
            try await container.reached(.modifyRecords)
            return try await base.modifyRecords(saving: saving, deleting: deleting)
        }
        func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
            try await container.reached(.fetchDatabaseChanges)
            return try await base.fetchDatabaseChanges(since: token)
        }
        func fetchDatabaseChanges(since token: CloudChangeToken?, firstPages: [CloudZonePageRequest]) async throws -> CloudDatabaseChanges {
            try await container.reached(.fetchDatabaseChanges)
            return try await base.fetchDatabaseChanges(since: token, firstPages: firstPages)
        }
        func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
            try await base.fetchZoneChanges(zone, since: token, limit: limit)
        }
        func fetchArrivingZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> ArrivingZoneChanges {
            try await base.fetchArrivingZoneChanges(zone, since: token, limit: limit)
        }
        func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await base.missingAssets(hashes) }
        func uploadAssets(_ assets: [CloudAsset]) async throws { try await base.uploadAssets(assets) }
        func fetchAsset(_ hash: String) async throws -> CloudAsset { try await base.fetchAsset(hash) }
        func saveShare(_ share: CloudShare) async throws -> CloudShare { try await base.saveShare(share) }
        func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare { try await base.fetchShare(rootRecordID: rootRecordID) }
        func deleteShare(rootRecordID: CloudRecordID) async throws { try await base.deleteShare(rootRecordID: rootRecordID) }
    }

    @Test(arguments: WritePoint.allCases, [SyncEncryption.endToEnd, .disabled])
    func aWriteOfTheAppsContainerIsCapturedAndSent(point: WritePoint, encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let database = try DatabaseQueue()
        let container = AuditingContainer(base: cloud.container(user: "alice"), database: database, point: point)
        let a = try await SyncTestDevice("a", container: container, database: database, encryption: encryption)
        let b = try await SyncTestDevice("b", cloud: cloud, encryption: encryption)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        #expect(container.written.withLock { $0 }, "the engine never reached \(point)")
        // The container's row waits like any local edit, and goes with the next send.
        try await a.engine.syncChanges()
        try await a.engine.syncChanges()
        #expect(try await a.engine.pendingCount() == 0)
        try await b.engine.fetchChanges()
        #expect(try await b.strings("SELECT id FROM games ORDER BY id") == ["audit-\(point.rawValue)", "g1"])
    }

    @Test func theEnginesOwnWorkStaysMarkedAroundTheContainer() async throws {
        // The control: statements the engine runs itself, before and after the container's
        // calls, are still the engine's (received rows are not sent back as local edits).
        let cloud = MockCloud()
        let database = try DatabaseQueue()
        let container = AuditingContainer(base: cloud.container(user: "alice"), database: database, point: .modifyRecords)
        let a = try await SyncTestDevice("a", container: container, database: database)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await b.execute("INSERT INTO games (id, title) VALUES ('g2', 'Chess')")
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await a.engine.pendingCount() == 0)
        #expect(try await a.strings("SELECT id FROM games") == ["g2"])
    }
}
