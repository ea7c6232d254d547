import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Testing

@testable import StrataSync

/// A save whose answer was lost goes again; if another device fetched the saved record and
/// deleted it meanwhile, the retry must not bring it back: the cloud refuses it
/// (`supersededByDelete`) and the phone deletes its copy, as it would have had the answer
/// arrived. An edit made after the lost answer is newer than the delete, and still wins.
@Suite(.timeLimit(.minutes(3)))
struct LostAnswerDeleteTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// How the phone meets the delete: by retrying first, or by fetching it first (the
    /// tombstone meets a pending save, which an unanswered save is, and keeps it).
    enum Retry: String, CaseIterable, Sendable { case sendFirst, fetchFirst }

    static func devices(_ cloud: MockCloud, encryption: SyncEncryption) async throws -> (phone: SyncTestDevice, tablet: SyncTestDevice) {
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, encryption: encryption)
        // A first row sent whole: the zone and, end to end, its key are in the cloud before the
        // request whose answer is lost.
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g0', 'Seed')")
        try await phone.engine.sendChanges()
        try await tablet.engine.fetchChanges()
        return (phone, tablet)
    }

    /// The names of the zone's records, sorted.
    static func names(in cloud: MockCloud) -> [String] {
        cloud.records(in: zone).map(\.id.name).sorted()
    }

    /// The phone's send whose answer is lost after the cloud applied it.
    static func sendLosingTheAnswer(_ phone: SyncTestDevice, cloud: MockCloud) async throws {
        cloud.loseNextResponses(1, operations: [.modifyRecords])
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
    }

    static func retry(_ phone: SyncTestDevice, _ retry: Retry) async throws {
        if retry == .fetchFirst { try await phone.engine.fetchChanges() }
        try await phone.engine.sendChanges()
        try await phone.engine.fetchChanges()
    }

    static let encryptions: [SyncEncryption] = [.disabled, .endToEnd]

    @Test(arguments: Retry.allCases, encryptions)
    func aNewRecordDeletedElsewhereAfterItsLostAnswerStaysDeleted(retry: Retry, encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let (phone, tablet) = try await Self.devices(cloud, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Chess'), ('g2', 'Go')")
        try await Self.sendLosingTheAnswer(phone, cloud: cloud)
        #expect(Self.names(in: cloud) == ["g0:games", "g1:games", "g2:games"])
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        try await Self.retry(phone, retry)
        #expect(try await phone.strings("SELECT id FROM games ORDER BY id") == ["g0", "g2"])
        #expect(try await phone.pending() == 0)
        #expect(Self.names(in: cloud) == ["g0:games", "g2:games"])
        try await tablet.engine.fetchChanges()
        #expect(try await tablet.rows() == phone.rows())
    }

    @Test(arguments: Retry.allCases, encryptions)
    func anEditDeletedElsewhereAfterItsLostAnswerStaysDeleted(retry: Retry, encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let (phone, tablet) = try await Self.devices(cloud, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
        try await phone.engine.sendChanges()
        try await phone.execute("UPDATE games SET title = 'Chess 2', score = 2 WHERE id = 'g1'")
        try await Self.sendLosingTheAnswer(phone, cloud: cloud)
        try await tablet.engine.fetchChanges()
        #expect(try await tablet.strings("SELECT title FROM games WHERE id = 'g1'") == ["Chess 2"])
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        try await Self.retry(phone, retry)
        #expect(try await phone.strings("SELECT id FROM games") == ["g0"])
        #expect(try await phone.pending() == 0)
        #expect(Self.names(in: cloud) == ["g0:games"])
    }

    /// An edit made after the lost answer carries a newer version than the delete removed: it
    /// is an edit the other device never saw, and beats its delete as any such edit does.
    @Test(arguments: Retry.allCases)
    func anEditMadeAfterTheLostAnswerStillBeatsTheDelete(retry: Retry) async throws {
        let cloud = MockCloud()
        let (phone, tablet) = try await Self.devices(cloud, encryption: .disabled)
        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
        try await Self.sendLosingTheAnswer(phone, cloud: cloud)
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()
        try await phone.execute("UPDATE games SET score = 5 WHERE id = 'g1'")

        try await Self.retry(phone, retry)
        try await tablet.engine.fetchChanges()
        #expect(try await phone.strings("SELECT title || ' ' || score FROM games WHERE id = 'g1'") == ["Chess 5"])
        #expect(try await tablet.rows() == phone.rows())
        #expect(try await phone.pending() == 0)
    }

    /// A parent and its children inserted in one transaction, the answer lost, the parent
    /// deleted on the tablet (its children with it, `ON DELETE CASCADE`): all of them stay
    /// deleted, whatever order the answers come in.
    @Test(arguments: Retry.allCases)
    func aParentAndChildrenDeletedElsewhereStayDeleted(retry: Retry) async throws {
        let cloud = MockCloud()
        let (phone, tablet) = try await Self.devices(cloud, encryption: .disabled)
        try await phone.execute(
            """
            INSERT INTO games (id, title) VALUES ('g1', 'Chess'), ('g2', 'Go');
            INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann'), ('p2', 'g1', 'Bo'), ('p3', 'g2', 'Cy');
            """)
        try await Self.sendLosingTheAnswer(phone, cloud: cloud)
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        try await Self.retry(phone, retry)
        try await tablet.engine.fetchChanges()
        #expect(try await phone.rows() == ["game g0 'Seed' NULL", "game g2 'Go' NULL", "player p3 'g2' 'Cy'"])
        #expect(try await tablet.rows() == phone.rows())
        #expect(try await phone.pending() == 0)
        #expect(Self.names(in: cloud) == ["g0:games", "g2:games", "p3:players"])
    }

    /// The answer of the tablet's delete is lost too, and it deletes again: nothing changes.
    /// Then the phone inserts the same key anew, which is a new record with new versions.
    @Test func aKeyInsertedAgainAfterTheDeleteIsNew() async throws {
        let cloud = MockCloud()
        let (phone, tablet) = try await Self.devices(cloud, encryption: .disabled)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Chess')")
        try await Self.sendLosingTheAnswer(phone, cloud: cloud)
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await Self.sendLosingTheAnswer(tablet, cloud: cloud)
        try await tablet.engine.sendChanges()
        try await Self.retry(phone, .sendFirst)
        #expect(try await phone.strings("SELECT id FROM games") == ["g0"])

        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Chess again')")
        try await phone.engine.sendChanges()
        try await tablet.engine.fetchChanges()
        #expect(try await tablet.strings("SELECT title FROM games WHERE id = 'g1'") == ["Chess again"])
        #expect(try await phone.pending() == 0)
        #expect(try await tablet.pending() == 0)
    }
}
