import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// Moving a child between a private and a shared parent moves its whole subtree: within the
/// owner's zone (the share's participants see it arrive or go), and between zones (a
/// participant moving a child of the shared game under a game of their own).
@Suite(.timeLimit(.minutes(5))) struct ShareMoveTests {
    static let schema =
        SyncTestDevice.schemaSQL + """
            CREATE TABLE turns (
                id TEXT PRIMARY KEY NOT NULL,
                playerID TEXT REFERENCES players(id) ON DELETE CASCADE,
                points INTEGER
            );
            """
    let cloud = MockCloud()
    let time = ManualWallClock()
    let a1: SyncTestDevice
    let a2: SyncTestDevice
    let b: SyncTestDevice
    let aliceZone = CloudZoneID(name: "strata.default", owner: "alice")
    let bobZone = CloudZoneID(name: "strata.default", owner: "bob")

    init() async throws {
        let (cloud, time) = (cloud, time)
        func device(_ id: String, _ user: String) async throws -> SyncTestDevice {
            try await SyncTestDevice(id, cloud: cloud, user: user, time: time, schema: Self.schema, tables: ["games", "players", "turns"])
        }
        a1 = try await device("a1", "alice")
        a2 = try await device("a2", "alice")
        b = try await device("b", "bob")
        for device in [a1, a2, b] { device.engine.start() }
    }

    /// Alice's shared game g1 (player p1) and private game g2 (player p2 with turn t1); bob
    /// accepted g1 with `permission`.
    func seed(_ permission: CloudShare.Permission) async throws {
        try await a1.execute(
            """
            INSERT INTO games (id, title) VALUES ('g1', 'Shared'), ('g2', 'Private');
            INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob'), ('p2', 'g2', 'Blob Jr');
            INSERT INTO turns (id, playerID, points) VALUES ('t1', 'p2', 3);
            """)
        try await a1.engine.sendChanges()
        let shared = try await a1.engine.share(record: SharedGame(id: "g1")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: permission))
        }
        try await b.engine.acceptShare(url: shared.url)
    }

    func rows(_ device: SyncTestDevice) async throws -> [String] {
        try await device.rows()
            + device.database.read { db in
                try String.fetchAll(
                    db, sql: "SELECT 'turn ' || id || ' ' || quote(playerID) || ' ' || quote(points) FROM turns ORDER BY id")
            }
    }

    func syncAll() async throws {
        for device in [a1, b, a2, a1, b] { try await device.engine.syncChanges() }
    }

    func names(in zone: CloudZoneID) -> [String] {
        cloud.records(in: zone).map(\.id.name).sorted()
    }

    @Test func theOwnerMovingAPlayerIntoTheSharedGameBringsItAndItsTurnsToTheParticipantAndBackOut() async throws {
        try await seed(.readWrite)
        #expect(try await rows(b) == ["game g1 'Shared' NULL", "player p1 'g1' 'Blob'"])

        try await a1.execute("UPDATE players SET gameID = 'g1' WHERE id = 'p2'")
        try await syncAll()
        #expect(try await rows(b) == ["game g1 'Shared' NULL", "player p1 'g1' 'Blob'", "player p2 'g1' 'Blob Jr'", "turn t1 'p2' 3"])
        // The participant edits the turn that came with the player.
        try await b.execute("UPDATE turns SET points = 5 WHERE id = 't1'")
        try await syncAll()
        #expect(try await rows(a2).contains("turn t1 'p2' 5"))

        try await a2.execute("UPDATE players SET gameID = 'g2' WHERE id = 'p2'")
        try await syncAll()
        #expect(try await rows(b) == ["game g1 'Shared' NULL", "player p1 'g1' 'Blob'"])
        let aliceRows = [
            "game g1 'Shared' NULL", "game g2 'Private' NULL", "player p1 'g1' 'Blob'", "player p2 'g2' 'Blob Jr'", "turn t1 'p2' 5",
        ]
        #expect(try await rows(a1) == aliceRows)
        #expect(try await rows(a2) == aliceRows)
    }

    @Test func aParticipantMovingAPlayerUnderTheirOwnGameMovesItAndItsTurnsToTheirZone() async throws {
        try await seed(.readWrite)
        try await a1.execute("UPDATE players SET gameID = 'g1' WHERE id = 'p2'")
        try await syncAll()

        try await b.execute("INSERT INTO games (id, title) VALUES ('bg', 'Bob''s')")
        try await b.execute("UPDATE players SET gameID = 'bg' WHERE id = 'p2'")
        try await syncAll()
        #expect(names(in: bobZone) == ["bg:games", "p2:players", "t1:turns"])
        #expect(names(in: aliceZone) == ["g1:games", "g2:games", "p1:players"])
        #expect(
            try await rows(b) == [
                "game bg 'Bob''s' NULL", "game g1 'Shared' NULL", "player p1 'g1' 'Blob'", "player p2 'bg' 'Blob Jr'", "turn t1 'p2' 3",
            ])
        let aliceRows = ["game g1 'Shared' NULL", "game g2 'Private' NULL", "player p1 'g1' 'Blob'"]
        #expect(try await rows(a1) == aliceRows)
        #expect(try await rows(a2) == aliceRows)
        #expect(try await b.pending() == 0)
        try await b.engine.database.read { db in
            let zones = try String.fetchAll(
                db,
                sql: "SELECT DISTINCT ownerName FROM strata_sync.metadata WHERE recordType <> 'games' AND recordPrimaryKey IN ('p2', 't1')")
            #expect(zones == ["bob"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.moved_records") == 0)
        }

        // And back into the shared game: into alice's zone again, edited on the way.
        try await b.execute("UPDATE players SET gameID = 'g1', name = 'Back' WHERE id = 'p2'")
        try await syncAll()
        #expect(names(in: bobZone) == ["bg:games"])
        #expect(names(in: aliceZone) == ["g1:games", "g2:games", "p1:players", "p2:players", "t1:turns"])
        #expect(try await rows(a2).contains("player p2 'g1' 'Back'"))
        #expect(try await rows(a2).contains("turn t1 'p2' 3"))
    }

    @Test func aMoveThatFailsHalfWayKeepsTheOldCopyUntilTheNewOneIsSent() async throws {
        try await seed(.readWrite)
        try await a1.execute("UPDATE players SET gameID = 'g1' WHERE id = 'p2'")
        try await syncAll()
        try await b.execute("INSERT INTO games (id, title) VALUES ('bg', 'Bob''s')")
        try await b.execute("UPDATE players SET gameID = 'bg' WHERE id = 'p2'")
        cloud.failNextRequests(1, with: .networkFailure, operations: [.modifyRecords])
        await #expect(throws: CloudError.networkFailure) { try await b.engine.sendChanges() }
        // Nothing left the old zone while the new copies are not sent.
        #expect(names(in: aliceZone).contains("p2:players"))
        try await b.engine.sendChanges()
        #expect(names(in: aliceZone) == ["g1:games", "g2:games", "p1:players"])
        #expect(names(in: bobZone) == ["bg:games", "p2:players", "t1:turns"])
    }

    @Test func aReadOnlyParticipantCannotMoveAChildIntoOrOutOfTheSharedGame() async throws {
        try await seed(.readOnly)
        try await b.execute("INSERT INTO games (id, title) VALUES ('bg', 'Bob''s'); INSERT INTO players (id, gameID) VALUES ('bp', 'bg')")
        await #expect(throws: DatabaseError.self) { try await b.execute("UPDATE players SET gameID = 'g1' WHERE id = 'bp'") }
        await #expect(throws: DatabaseError.self) { try await b.execute("UPDATE players SET gameID = 'bg' WHERE id = 'p1'") }
    }
}
