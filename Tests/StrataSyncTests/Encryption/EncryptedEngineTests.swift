import Crypto
import Foundation
import StrataSQLite
import StrataSyncTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// What an encrypting engine puts in the cloud, and what engines do with records sealed or not
/// as they expect.
@Suite(.timeLimit(.minutes(2))) struct EncryptedEngineTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    @Test func theCloudHoldsOnlySealedFieldsAndTheKeyZoneHoldsNoKeyInTheClear() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 42)")
        try await a.engine.syncChanges()
        let stored = try #require(cloud.records(in: Self.zone).first)
        #expect(Array(stored.fields.keys) == ["strata.sealed"])
        #expect(Set(stored.fieldVersions.keys) == ["title", "score"])
        #expect(stored.type == "games" && stored.id.name == "g1:games")
        #expect(try await a.engine.openCloudRecord(stored).fields == ["title": .text("Poker"), "score": .integer(42)])
        // The key zone: the identity's public key, and the zone key sealed (never its 32 raw bytes).
        let keys = cloud.records(in: CloudZoneID(name: "strata.keys", owner: "alice"))
        #expect(Set(keys.map(\.id.name)) == ["identity", "zone.strata.default.1"])
        let sealedKey = try #require(keys.first { $0.id.name == "zone.strata.default.1" })
        guard case .bytes(let wrapped) = sealedKey.fields["key"] else {
            Issue.record("no sealed key")
            return
        }
        #expect(wrapped.count > 32 + 32)
    }

    @Test func anUnsealedRecordIsQuarantinedByAnEncryptingEngine() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.engine.prepareEncryption()
        let database = cloud.container(user: "alice").privateDatabase
        try await database.saveZones([Self.zone])
        let planted = try await database.modifyRecords(
            saving: [CloudRecord(id: CloudRecordID(name: "g9:games", zone: Self.zone), type: "games", fields: ["title": .text("planted")])],
            deleting: [])
        #expect(planted.saveResults.values.allSatisfy { (try? $0.get()) != nil })
        try await a.engine.fetchChanges()
        #expect(try await a.rows().isEmpty)
        #expect(a.engine.status.quarantinedCount == 1)
        let reason = try await a.database.write { db in
            try String.fetchOne(db, sql: "SELECT error FROM strata_sync.quarantined_records WHERE recordName = 'g9:games'")
        }
        #expect(reason == "encryption: \(EncryptionError.unsealedRecord(CloudRecordID(name: "g9:games", zone: Self.zone)))")
    }

    @Test func aSealedRecordIsQuarantinedByAnEngineThatDoesNotEncryptNotAppliedAsEmptyColumns() async throws {
        let cloud = MockCloud()
        let sealing = try await SyncTestDevice("a", cloud: cloud)
        try await sealing.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 42)")
        try await sealing.engine.syncChanges()
        let plain = try await SyncTestDevice("b", cloud: cloud, encryption: .disabled)
        try await plain.engine.fetchChanges()
        #expect(try await plain.rows().isEmpty)
        #expect(plain.engine.status.quarantinedCount == 1)
        #expect(!plain.engine.isEncrypting)
        await #expect(throws: SyncEngineError.encryptionDisabled) { try await plain.engine.pendingEnrollments() }
    }

    @Test func withoutEncryptionTheCloudHoldsTheFieldsAsTheyAre() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, encryption: .disabled)
        let b = try await SyncTestDevice("b", cloud: cloud, encryption: .disabled)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 42)")
        try await a.engine.syncChanges()
        #expect(cloud.records(in: Self.zone).first?.fields == ["title": .text("Poker"), "score": .integer(42)])
        #expect(cloud.records(in: CloudZoneID(name: "strata.keys", owner: "alice")).isEmpty)
        try await b.engine.syncChanges()
        #expect(try await b.rows() == ["game g1 'Poker' 42"])
    }

    @Test func aKeyFileIsCreatedReadableByItsOwnerOnly() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("device.strata-keys").path
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, encryption: .endToEnd(keys: .file(atPath: path)))
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o777 } == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["device.strata-keys"])
        // A second engine reading the same file is the same device: no enrollment.
        let again = try await SyncTestDevice("a2", cloud: cloud, encryption: .endToEnd(keys: .file(atPath: path)))
        try await again.engine.syncChanges()
        #expect(try await again.rows() == ["game g1 'Poker' NULL"])
    }
}

/// A device whose signed-in user changes: the engine's keys follow the user.
@Suite(.timeLimit(.minutes(2))) struct EncryptedAccountSwitchTests {
    final class SwitchingContainer: CloudContainerWrapping, Sendable {
        let cloud: MockCloud
        let user: Mutex<String>
        init(cloud: MockCloud, user: String) {
            self.cloud = cloud
            self.user = Mutex(user)
        }
        var current: MockCloudContainer { cloud.container(user: user.withLock { $0 }) }
        var wrappedContainer: any CloudContainer { current }
        var identifier: String { cloud.identifier }
        func accountStatus() async throws -> CloudAccountStatus { try await current.accountStatus() }
        func currentUser() async throws -> String { try await current.currentUser() }
        var privateDatabase: any CloudDatabase { current.privateDatabase }
        var sharedDatabase: any CloudDatabase { current.sharedDatabase }
        func changeHints() -> AsyncStream<Void> { current.changeHints() }
        func acceptShare(url: String) async throws -> CloudShare { try await current.acceptShare(url: url) }
        func publishPublicKey(_ key: Data) async throws { try await current.publishPublicKey(key) }
        func publicKeys(of users: [String]) async throws -> [String: Data] { try await current.publicKeys(of: users) }
        func setUserProfile(_ profile: CloudUserProfile) async throws { try await current.setUserProfile(profile) }
        func userProfile() async throws -> CloudUserProfile? { try await current.userProfile() }
    }

    @Test func afterASwitchTheNextUsersRecordsAreSealedWithTheirKeysNotThePreviousUsers() async throws {
        let cloud = MockCloud()
        let container = SwitchingContainer(cloud: cloud, user: "alice")
        let device = try await SyncTestDevice("shared-tablet", container: container)
        try await device.execute("INSERT INTO games (id, title) VALUES ('g1', 'Alice''s')")
        try await device.engine.syncChanges()

        container.user.withLock { $0 = "bob" }
        try await device.engine.syncChanges()
        #expect(try await device.rows().isEmpty)
        try await device.execute("INSERT INTO games (id, title) VALUES ('g2', 'Bob''s')")
        try await device.engine.syncChanges()

        // Bob's other device (his keychain) reads his records; Alice's other device reads hers.
        let bobsPhone = try await SyncTestDevice("bob-phone", cloud: cloud, user: "bob")
        try await bobsPhone.engine.syncChanges()
        #expect(try await bobsPhone.rows() == ["game g2 'Bob''s' NULL"])
        let alicesPhone = try await SyncTestDevice("alice-phone", cloud: cloud, user: "alice")
        try await alicesPhone.engine.syncChanges()
        #expect(try await alicesPhone.rows() == ["game g1 'Alice''s' NULL"])
        // Bob's zone key is not Alice's.
        let bobsRecord = try #require(cloud.records(in: CloudZoneID(name: "strata.default", owner: "bob")).first)
        await #expect(throws: (any Error).self) { _ = try await alicesPhone.engine.openCloudRecord(bobsRecord) }
    }
}

/// The operator can seal a key to anyone's public key: a zone key it planted must never be
/// taken for the user's.
@Suite(.timeLimit(.minutes(2))) struct PlantedKeyTests {
    @Test func aZoneKeyThePlatformPlantedInTheKeyZoneIsIgnored() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        // The operator: alice's public key from the directory, a key it knows, version 9.
        let published = try #require(try await cloud.container(user: "mallory").publicKeys(of: ["alice"])["alice"])
        let alice = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: published)
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        let known = ZoneKey.random(version: 9)
        let operatorKey = Curve25519.KeyAgreement.PrivateKey()
        let context = Keyring.zoneKeyContext(zone, version: 9, recipient: "alice")
        let planted = CloudRecord(
            id: CloudRecordID(name: "zone.strata.default.9", zone: CloudZoneID(name: "strata.keys", owner: "alice")), type: "strata.key",
            fields: ["key": .bytes(try KeyWrapping.seal(known.sealedPayload, to: alice, from: operatorKey, context: context))])
        _ = try await cloud.container(user: "alice").privateDatabase.modifyRecords(saving: [planted], deleting: [])

        a.engine.forgetKeysInMemory()
        try await a.execute("INSERT INTO games (id, title) VALUES ('g2', 'Chess')")
        try await a.engine.syncChanges()
        let sealed = try #require(cloud.records(in: zone).first { $0.id.name == "g2:games" })
        #expect(RecordSealing.keyVersion(of: sealed) == 1)
        #expect(throws: EncryptionError.self) { _ = try RecordSealing.open(sealed, with: known) }
        #expect(try await a.engine.openCloudRecord(sealed).fields["title"] == .text("Chess"))
    }
}

/// A participant whose key for one shared zone has not arrived still receives the others.
@Suite(.timeLimit(.minutes(2))) struct WaitingSharedZoneTests {
    @Test func aSharedZoneWaitingForItsKeyDoesNotHoldBackAnotherOne() async throws {
        let cloud = MockCloud()
        let alice = try await SyncTestDevice("alice", cloud: cloud, user: "alice")
        let bob = try await SyncTestDevice("bob", cloud: cloud, user: "bob")
        let dave = try await SyncTestDevice("dave", cloud: cloud, user: "dave")
        for device in [alice, bob, dave] { device.engine.start() }
        try await alice.execute("INSERT INTO games (id, title) VALUES ('a1', 'From Alice')")
        try await bob.execute("INSERT INTO games (id, title) VALUES ('b1', 'From Bob')")
        try await alice.engine.sendChanges()
        try await bob.engine.sendChanges()
        let fromAlice = try await alice.engine.share(record: SharedGame(id: "a1", title: "From Alice")) {
            $0.participants.append(CloudShare.Participant(user: "dave", permission: .readOnly))
        }
        let fromBob = try await bob.engine.share(record: SharedGame(id: "b1", title: "From Bob")) {
            $0.participants.append(CloudShare.Participant(user: "dave", permission: .readOnly))
        }
        // Bob's share is accepted without its link key: that zone waits for Bob's next sync.
        // Accepted; Bob's zone waits (the error is the engine's last), Alice's arrives.
        try await dave.engine.acceptShare(url: fromBob.share.url)
        #expect(dave.engine.status.lastError is EncryptionError)
        await #expect(throws: EncryptionError.self) { try await dave.engine.acceptShare(url: fromAlice.url) }
        #expect(try await dave.rows() == ["game a1 'From Alice' NULL"])
        try await bob.engine.syncChanges()
        try await dave.engine.syncChanges()
        #expect(try await dave.rows() == ["game a1 'From Alice' NULL", "game b1 'From Bob' NULL"])
    }
}

/// A key zone whose cloud says "more" without moving its token ends with a typed error, never a
/// silent stop with half the keys read (nor a loop).
@Suite(.timeLimit(.minutes(1))) struct StalledKeyZoneTests {
    struct StallingKeyZone: CloudContainerWrapping {
        let base: MockCloudContainer
        var wrappedContainer: any CloudContainer { base }
        var identifier: String { base.identifier }
        func accountStatus() async throws -> CloudAccountStatus { try await base.accountStatus() }
        func currentUser() async throws -> String { try await base.currentUser() }
        var privateDatabase: any CloudDatabase { Stalling(base: base.privateDatabase) }
        var sharedDatabase: any CloudDatabase { base.sharedDatabase }
        func changeHints() -> AsyncStream<Void> { base.changeHints() }
        func acceptShare(url: String) async throws -> CloudShare { try await base.acceptShare(url: url) }
        func publishPublicKey(_ key: Data) async throws { try await base.publishPublicKey(key) }
        func publicKeys(of users: [String]) async throws -> [String: Data] { try await base.publicKeys(of: users) }
        func setUserProfile(_ profile: CloudUserProfile) async throws { try await base.setUserProfile(profile) }
        func userProfile() async throws -> CloudUserProfile? { try await base.userProfile() }
    }

    struct Stalling: CloudDatabase {
        let base: any CloudDatabase
        var scope: CloudDatabaseScope { base.scope }
        func saveZones(_ zones: [CloudZoneID]) async throws { try await base.saveZones(zones) }
        func deleteZones(_ zones: [CloudZoneID]) async throws { try await base.deleteZones(zones) }
        func fetchRecords(_ ids: [CloudRecordID]) async throws -> [CloudRecordID: Result<CloudRecord, CloudError>] {
            try await base.fetchRecords(ids)
        }
        func modifyRecords(saving: [CloudRecord], deleting: [CloudRecordID]) async throws -> CloudModifyResult {
            try await base.modifyRecords(saving: saving, deleting: deleting)
        }
        func fetchDatabaseChanges(since token: CloudChangeToken?) async throws -> CloudDatabaseChanges {
            try await base.fetchDatabaseChanges(since: token)
        }
        func fetchZoneChanges(_ zone: CloudZoneID, since token: CloudChangeToken?, limit: Int) async throws -> CloudZoneChanges {
            var page = try await base.fetchZoneChanges(zone, since: token, limit: limit)
            if zone.name == "strata.keys" {
                page.moreComing = true
                if let token { page.token = token }
            }
            return page
        }
        func missingAssets(_ hashes: [String]) async throws -> Set<String> { try await base.missingAssets(hashes) }
        func uploadAssets(_ assets: [CloudAsset]) async throws { try await base.uploadAssets(assets) }
        func fetchAsset(_ hash: String) async throws -> CloudAsset { try await base.fetchAsset(hash) }
        func saveShare(_ share: CloudShare) async throws -> CloudShare { try await base.saveShare(share) }
        func fetchShare(rootRecordID: CloudRecordID) async throws -> CloudShare { try await base.fetchShare(rootRecordID: rootRecordID) }
        func deleteShare(rootRecordID: CloudRecordID) async throws { try await base.deleteShare(rootRecordID: rootRecordID) }
    }

    @Test func aKeyZoneThatNeverMovesItsTokenThrowsFetchStalled() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        let stalled = try await SyncTestDevice("b", container: StallingKeyZone(base: cloud.container(user: "alice")))
        // Its first seal reads the key zone.
        try await stalled.execute("INSERT INTO games (id, title) VALUES ('g2', 'Chess')")
        await #expect {
            try await stalled.engine.syncChanges()
        } throws: { error in
            guard case SyncEngineError.fetchStalled(let zone, _) = error else { return false }
            return zone == CloudZoneID(name: "strata.keys", owner: "alice")
        }
    }
}
