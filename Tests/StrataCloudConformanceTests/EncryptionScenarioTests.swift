import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// End-to-end encryption as users live it, on every cloud: a second device enrolled by
/// approval or by passphrase, a share to another user, a participant removed (the key rotates
/// and their old key is refused for later writes), and every key lost (the data starts over
/// from the device that has it, and no local row goes).
@Suite(.timeLimit(.minutes(5))) struct EncryptionScenarioTests {
    let clock = ManualWallClock()
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// A device of `user` whose keys live in `keys` (a device's own keychain: nothing shared
    /// with the user's other devices).
    func device(
        _ id: String, user: String, keys: KeyStorage = .inMemory(), passphrase: String? = nil, database: DatabaseQueue? = nil
    ) async throws -> SyncTestDevice {
        let device = try await SyncTestDevice(
            id, container: TestCloud.current.container(user: user), time: clock, schema: database == nil ? SyncTestDevice.schemaSQL : "",
            database: database, encryption: .endToEnd(keys: keys, recoveryPassphrase: passphrase))
        device.engine.start()
        return device
    }

    /// The fingerprint an enrollment-required error shows, or nil for any other outcome.
    func enrollmentFingerprint(of body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch EncryptionError.enrollmentRequired(_, let fingerprint) {
            return fingerprint
        } catch {
            Issue.record("expected enrollmentRequired, got \(error)")
            return nil
        }
    }

    @Test(arguments: CloudKind.available) func aSecondDeviceReadsNothingUntilAnotherApprovesIt(_ kind: CloudKind) async throws {
        try await kind.run {
            let phone = try await device("phone", user: "alice")
            try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 3)")
            try await phone.engine.syncChanges()

            let laptop = try await device("laptop", user: "alice")
            let fingerprint = await enrollmentFingerprint { try await laptop.engine.syncChanges() }
            let shown = try #require(fingerprint)
            #expect(try await laptop.rows().isEmpty)
            // Asked twice, it is still one request.
            _ = await enrollmentFingerprint { try await laptop.engine.syncChanges() }
            let pending = try await phone.engine.pendingEnrollments()
            #expect(pending.map(\.fingerprint) == [shown])

            try await phone.engine.approveEnrollment(try #require(pending.first))
            try await laptop.engine.syncChanges()
            #expect(try await laptop.rows() == ["game g1 'Poker' 3"])
            #expect(try await phone.engine.pendingEnrollments().isEmpty)

            try await laptop.execute("UPDATE games SET score = 4 WHERE id = 'g1'")
            try await laptop.engine.syncChanges()
            try await phone.engine.syncChanges()
            #expect(try await phone.rows() == ["game g1 'Poker' 4"])
        }
    }

    @Test(arguments: CloudKind.available) func aDeviceEnrollsWithTheRecoveryPassphraseAndNotWithAnother(_ kind: CloudKind) async throws {
        try await kind.run {
            let phone = try await device("phone", user: "alice")
            try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
            try await phone.engine.syncChanges()
            // No passphrase set yet.
            let early = try await device("early", user: "alice")
            await #expect(throws: EncryptionError.noRecoveryPassphrase(user: "alice")) {
                try await early.engine.enroll(recoveryPassphrase: "correct horse")
            }
            try await phone.engine.setRecoveryPassphrase("correct horse")

            let guesser = try await device("guesser", user: "alice", passphrase: "battery staple")
            await #expect(throws: EncryptionError.wrongRecoveryPassphrase(user: "alice")) { try await guesser.engine.syncChanges() }
            #expect(try await guesser.rows().isEmpty)

            let tablet = try await device("tablet", user: "alice", passphrase: "correct horse")
            try await tablet.engine.syncChanges()
            #expect(try await tablet.rows() == ["game g1 'Poker' NULL"])
            // A device that met the enrollment error enrolls later with the passphrase.
            _ = await enrollmentFingerprint { try await early.engine.syncChanges() }
            try await early.engine.enroll(recoveryPassphrase: "correct horse")
            try await early.engine.syncChanges()
            #expect(try await early.rows() == ["game g1 'Poker' NULL"])
        }
    }

    @Test(arguments: CloudKind.available) func aRemovedParticipantCannotReadWhatIsWrittenAfterNorWriteWithTheOldKey(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            let alice = try await device("alice-phone", user: "alice")
            let bob = try await device("bob-phone", user: "bob")
            let carol = try await device("carol-phone", user: "carol")
            try await alice.execute(
                "INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Private'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob')"
            )
            try await alice.engine.sendChanges()
            let game = ConformanceGame(id: "g1", title: "Poker")
            let shared = try await alice.engine.share(record: game) { share in
                share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
                share.participants.append(CloudShare.Participant(user: "carol", permission: .readOnly))
            }
            // Neither had synced before: the link key in the URL opens the share's keys.
            #expect(shared.url.hasPrefix(shared.share.url + "?permission=readOnly#k="))
            try await bob.engine.acceptShare(url: shared.url)
            try await carol.engine.acceptShare(url: shared.url)
            #expect(try await bob.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])
            #expect(try await carol.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])
            // Without the link key, a participant who never synced waits for the owner: their
            // key is published when they accept, and the owner's next sync seals the zone's
            // keys to it.
            let dave = try await device("dave-phone", user: "dave")
            _ = try await alice.engine.share(record: game) { share in
                share.participants.append(CloudShare.Participant(user: "dave", permission: .readOnly))
            }
            try await dave.engine.acceptShare(url: shared.share.url)
            #expect(dave.engine.status.lastError as? EncryptionError == .missingZoneKey(Self.zone, version: 1))
            await #expect(throws: EncryptionError.missingZoneKey(Self.zone, version: 1)) { try await dave.engine.fetchChanges() }
            #expect(try await dave.rows().isEmpty)
            try await alice.engine.syncChanges()
            try await dave.engine.syncChanges()
            #expect(try await dave.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])

            // Carol is removed: the zone's key rotates, and what Alice writes next is sealed
            // with the new version, which Bob gets and Carol never does.
            _ = try await alice.engine.share(record: game) { share in share.participants.removeAll { $0.user == "carol" } }
            try await alice.execute("INSERT INTO players (id, gameID, name) VALUES ('p2', 'g1', 'Blob Jr')")
            try await alice.engine.syncChanges()
            try await bob.engine.syncChanges()
            #expect(try await bob.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'", "player p2 'g1' 'Blob Jr'"])
            let owner = TestCloud.current.container(user: "alice").privateDatabase
            let sealedID = CloudRecordID(name: "p2:players", zone: Self.zone)
            let sealed = try #require(try await owner.fetchRecords([sealedID])[sealedID]?.get())
            #expect(try await bob.engine.openCloudRecord(sealed).fields["name"] == .text("Blob Jr"))
            await #expect(throws: EncryptionError.missingZoneKey(Self.zone, version: 2)) {
                _ = try await carol.engine.openCloudRecord(sealed)
            }
            try await dave.engine.syncChanges()
            #expect(try await dave.rows().contains("player p2 'g1' 'Blob Jr'"))

            // What Carol could still seal (the old version), planted by an operator on her
            // behalf with edits after the rotation, is refused where it arrives.
            let later = HybridTimestamp(milliseconds: clock.read() + 60 * 60 * 1000, counter: 0, node: "carol-phone")
            let forged = try await carol.engine.sealForCloud(
                CloudRecord(
                    id: CloudRecordID(name: "p3:players", zone: Self.zone), type: "players",
                    fields: ["gameID": .text("g1"), "name": .text("forged")], fieldVersions: ["gameID": later, "name": later],
                    parent: CloudRecordID(name: "g1:games", zone: Self.zone)))
            #expect(RecordSealingProbe.version(of: forged) == 1)
            _ = try await owner.modifyRecords(saving: [forged], deleting: [])
            try await bob.engine.syncChanges()
            #expect(try await bob.rows().contains { $0.contains("forged") } == false)
            let reason = try await bob.database.write { db in
                try String.fetchOne(db, sql: "SELECT error FROM strata_sync.quarantined_records WHERE recordName = 'p3:players'")
            }
            #expect(reason?.contains("retired") == true, "\(reason ?? "not quarantined")")

            // Ending the share rotates again: what Alice writes next is sealed with version 3,
            // which no former participant holds.
            try await alice.engine.unshare(record: game)
            try await alice.execute("INSERT INTO players (id, gameID, name) VALUES ('p4', 'g1', 'after the share')")
            try await alice.engine.syncChanges()
            let afterID = CloudRecordID(name: "p4:players", zone: Self.zone)
            let after = try #require(try await owner.fetchRecords([afterID])[afterID]?.get())
            #expect(RecordSealingProbe.version(of: after) == 3)
            #expect(try await alice.engine.openCloudRecord(after).fields["name"] == .text("after the share"))
            for former in [bob, dave] {
                await #expect(throws: EncryptionError.missingZoneKey(Self.zone, version: 3)) {
                    _ = try await former.engine.openCloudRecord(after)
                }
            }
        }
    }

    @Test(arguments: CloudKind.available) func losingEveryKeyStartsOverFromTheDeviceWithTheDataAndDeletesNoRow(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            let keychain = KeyBox()
            let phone = try await device("phone", user: "alice", keys: keychain.storage)
            try await phone.execute(
                "INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob')"
            )
            try await phone.engine.syncChanges()
            let before = try await phone.rows()

            // The keychain is gone, and no other device or passphrase has the keys.
            keychain.erase()
            phone.engine.forgetKeysInMemory()
            try await phone.execute("UPDATE games SET title = 'Poker night' WHERE id = 'g1'")
            _ = await enrollmentFingerprint { try await phone.engine.syncChanges() }
            #expect(try await phone.rows().count == before.count)

            try await phone.engine.resetEncryptedData()
            let after = try await phone.rows()
            #expect(after == ["game g1 'Poker night' NULL", "game g2 'Chess' NULL", "player p1 'g1' 'Blob'"])
            #expect(try await phone.engine.pendingCount() == 0)
            try await phone.engine.syncChanges()
            #expect(try await phone.rows() == after)

            // A new device enrolls against the new keys and gets everything.
            let tablet = try await device("tablet", user: "alice")
            _ = await enrollmentFingerprint { try await tablet.engine.syncChanges() }
            for enrollment in try await phone.engine.pendingEnrollments() { try await phone.engine.approveEnrollment(enrollment) }
            try await tablet.engine.syncChanges()
            #expect(try await tablet.rows() == after)
        }
    }
}

/// A keychain a test can erase.
final class KeyBox: Sendable {
    private let data = Mutex<Data?>(nil)

    var storage: KeyStorage {
        KeyStorage.custom(named: "test keychain", load: { self.data.withLock { $0 } }, save: { bytes in self.data.withLock { $0 = bytes } })
    }

    func erase() { data.withLock { $0 = nil } }
}

/// The key version a sealed record names, read as anyone (the operator) can.
enum RecordSealingProbe {
    static func version(of record: CloudRecord) -> Int? {
        guard case .bytes(let envelope) = record.fields["strata.sealed"], envelope.count > 6 else { return nil }
        return envelope.dropFirst(2).prefix(4).reduce(0) { $0 << 8 | Int($1) }
    }
}
