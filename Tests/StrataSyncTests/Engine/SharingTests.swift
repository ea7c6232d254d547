import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

@Table("games") struct SharedGame {
    let id: String
    var title = ""
    var score: Int?
}

@Table("players") struct SharedPlayer {
    let id: String
    var gameID: String?
    var name: String?
}

/// Two users, three devices: alice shares a game from one of her two devices with bob.
@Suite(.timeLimit(.minutes(5))) struct SharingTests {
    let cloud = MockCloud()
    let time = ManualWallClock()
    let a1: SyncTestDevice
    let a2: SyncTestDevice
    let b: SyncTestDevice
    let game = SharedGame(id: "g1", title: "Poker")

    init() async throws {
        a1 = try await SyncTestDevice("a1", cloud: cloud, user: "alice", time: time)
        a2 = try await SyncTestDevice("a2", cloud: cloud, user: "alice", time: time)
        b = try await SyncTestDevice("b", cloud: cloud, user: "bob", time: time)
        for device in [a1, a2, b] { device.engine.start() }
    }

    /// Alice's game g1 with player p1, sent.
    func seed() async throws {
        try await a1.execute(
            "INSERT INTO games (id, title) VALUES ('g1', 'Poker'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob')")
        try await a1.engine.sendChanges()
    }

    @discardableResult
    func shareWithBob(_ permission: CloudShare.Permission) async throws -> SharedRecord {
        try await a1.engine.share(record: game) { share in
            share.title = "Poker night"
            share.participants.removeAll { $0.user == "bob" }
            share.participants.append(CloudShare.Participant(user: "bob", permission: permission))
        }
    }

    func isWritePermissionError(_ body: () async throws -> Void) async -> Bool {
        do {
            try await body()
            return false
        } catch let error as DatabaseError {
            return error.isWritePermissionError
        } catch {
            return false
        }
    }

    @Test func aSharedGameReachesTheParticipantAndEditsGoBothWays() async throws {
        try await seed()
        let shared = try await shareWithBob(.readWrite)
        #expect(shared.share.title == "Poker night")
        try await b.engine.acceptShare(shared)
        #expect(try await b.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])

        try await b.execute("UPDATE players SET name = 'Blob Jr' WHERE id = 'p1'")
        try await b.execute("INSERT INTO players (id, gameID, name) VALUES ('p2', 'g1', 'Bob')")
        try await b.engine.sendChanges()
        #expect(try await b.pending() == 0)
        try await a1.execute("UPDATE games SET title = 'Poker night' WHERE id = 'g1'")
        try await a1.engine.syncChanges()
        try await a2.engine.syncChanges()
        try await b.engine.syncChanges()
        let expected = ["game g1 'Poker night' NULL", "player p1 'g1' 'Blob Jr'", "player p2 'g1' 'Bob'"]
        #expect(try await a1.rows() == expected)
        #expect(try await a2.rows() == expected)
        #expect(try await b.rows() == expected)
        // The participant's new child lives in the owner's zone.
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).map(\.id.name).contains("p2:players"))
    }

    @Test func theShareIsQueryableOnBothSides() async throws {
        try await seed()
        let shared = try await shareWithBob(.readOnly)
        try await b.engine.acceptShare(url: shared.url)
        try await a1.engine.fetchChanges()
        let ownerSide = try await a1.database.write { db in try SyncMetadata.find(game.syncMetadataID).fetchOne(db) }
        #expect(ownerSide?.isShared == true)
        #expect(ownerSide?.share?.participant("bob")?.acceptance == .accepted)
        #expect(ownerSide?.sharePermission == nil)
        let rows = try await b.database.write { db in
            try SharedGame.leftJoin(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }
                .select { ($0.id, $1.isShared.ifnull(false), $1.sharePermission) }
                .fetchAll(db)
        }
        #expect(rows.count == 1 && rows.first?.0 == "g1" && rows.first?.1 == true && rows.first?.2 == "readOnly")
        let child = try await b.database.write { db in
            try SyncMetadata.find(SyncMetadata.ID(recordType: "players", recordPrimaryKey: "p1")).fetchOne(db)
        }
        #expect(child?.sharePermission == "readOnly")
        #expect(child?.isShared == false)
    }

    @Test func aReadOnlyParticipantsWritesFailAtOnce() async throws {
        try await seed()
        try await b.engine.acceptShare(url: try await shareWithBob(.readOnly).url)
        #expect(await isWritePermissionError { try await b.execute("UPDATE games SET title = 'Mine' WHERE id = 'g1'") })
        #expect(await isWritePermissionError { try await b.execute("UPDATE players SET name = 'Mine' WHERE id = 'p1'") })
        #expect(await isWritePermissionError { try await b.execute("INSERT INTO players (id, gameID, name) VALUES ('p9', 'g1', 'x')") })
        #expect(await isWritePermissionError { try await b.execute("DELETE FROM players WHERE id = 'p1'") })
        #expect(try await b.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])
        #expect(try await b.pending() == 0)
        // Bob's own rows are his to change.
        try await b.execute("INSERT INTO games (id, title) VALUES ('g2', 'Bob''s game')")
    }

    @Test func theCloudRefusingAWriteRestoresTheServersVersion() async throws {
        try await seed()
        try await b.engine.acceptShare(url: try await shareWithBob(.readWrite).url)
        try await b.execute("UPDATE players SET name = 'Edited offline' WHERE id = 'p1'")
        try await shareWithBob(.readOnly)
        try await b.engine.sendChanges()
        #expect(try await b.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])
        #expect(try await b.pending() == 0)
        try await b.engine.fetchChanges()
        #expect(await isWritePermissionError { try await b.execute("UPDATE players SET name = 'again' WHERE id = 'p1'") })
    }

    @Test func theOwnerRemovingTheParticipantTakesTheGameFromTheirDevices() async throws {
        try await seed()
        try await b.engine.acceptShare(url: try await shareWithBob(.readWrite).url)
        try await a1.engine.share(record: game) { $0.participants.removeAll { $0.user == "bob" } }
        try await b.engine.syncChanges()
        #expect(try await b.rows().isEmpty)
        #expect(try await a1.rows().count == 2)
    }

    @Test func theOwnerDeletingTheRootDeletesItForEveryone() async throws {
        try await seed()
        try await b.engine.acceptShare(url: try await shareWithBob(.readWrite).url)
        try await a1.execute("DELETE FROM games WHERE id = 'g1'")
        try await a1.engine.sendChanges()
        try await b.engine.syncChanges()
        try await a2.engine.syncChanges()
        #expect(try await b.rows().isEmpty)
        #expect(try await a2.rows().isEmpty)
        #expect(cloud.share(of: CloudRecordID(name: "g1:games", zone: CloudZoneID(name: "strata.default", owner: "alice"))) == nil)
    }

    @Test func aParticipantDeletingTheRootLeavesTheShareOnly() async throws {
        try await seed()
        try await b.engine.acceptShare(url: try await shareWithBob(.readOnly).url)
        try await b.execute("DELETE FROM games WHERE id = 'g1'")
        try await b.engine.sendChanges()
        #expect(try await b.rows().isEmpty)
        #expect(try await b.pending() == 0)
        try await b.engine.syncChanges()
        #expect(try await b.rows().isEmpty)
        try await a1.engine.syncChanges()
        #expect(try await a1.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 2)
    }

    @Test func unsharingTakesTheGameFromTheParticipant() async throws {
        try await seed()
        try await b.engine.acceptShare(url: try await shareWithBob(.readWrite).url)
        try await a1.engine.unshare(record: game)
        try await b.engine.syncChanges()
        #expect(try await b.rows().isEmpty)
        let metadata = try await a1.database.write { db in try SyncMetadata.find(game.syncMetadataID).fetchOne(db) }
        #expect(metadata?.isShared == false && metadata?.share == nil)
        await #expect(throws: SharingError.recordNotShared(table: "games", primaryKey: "g1")) { try await a1.engine.unshare(record: game) }
    }

    @Test func unsharingOneOfTwoGamesTakesOnlyThatOneFromTheParticipant() async throws {
        try await seed()
        try await a1.execute(
            "INSERT INTO games (id, title) VALUES ('g2', 'Chess'); INSERT INTO players (id, gameID, name) VALUES ('p2', 'g2', 'Ada')")
        try await a1.engine.sendChanges()
        try await b.engine.acceptShare(url: try await shareWithBob(.readWrite).url)
        let second = try await a1.engine.share(record: SharedGame(id: "g2")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
        }
        try await b.engine.acceptShare(url: second.url)
        #expect(try await b.rows().count == 4)

        try await a1.engine.unshare(record: game)
        try await b.engine.syncChanges()
        #expect(try await b.rows() == ["game g2 'Chess' NULL", "player p2 'g2' 'Ada'"])
        #expect(try await b.pending() == 0)
    }

    @Test func sharingASecondTimeReturnsTheSameShare() async throws {
        try await seed()
        let first = try await shareWithBob(.readOnly)
        let second = try await a1.engine.share(record: game)
        #expect(second.url == first.url)
        #expect(second.share.participant("bob")?.permission == .readOnly)
    }

    @Test func aGameWithAThousandPlayersIsSharedWhole() async throws {
        try await a1.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a1.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000) INSERT INTO players (id, gameID, name) SELECT 'p' || i, 'g1', 'player ' || i FROM n"
        )
        try await a1.engine.sendChanges()
        try await b.engine.acceptShare(url: try await shareWithBob(.readWrite).url)
        #expect(try await b.rows().count == 1_001)
    }

    @Test func refusalsNameTheTableAndTheReason() async throws {
        try await seed()
        await #expect(throws: SharingError.notARoot(table: "players", parentTable: "games")) {
            try await a1.engine.share(record: SharedPlayer(id: "p1", gameID: "g1", name: "Blob"))
        }
        try await a1.execute("INSERT INTO games (id, title) VALUES ('g2', 'Go')")
        await #expect(throws: SharingError.recordNotSynced(table: "games", primaryKey: "g2")) {
            try await a1.engine.share(record: SharedGame(id: "g2", title: "Go"))
        }
        a1.engine.stop()
        await #expect(throws: SharingError.engineNotRunning) { try await a1.engine.share(record: game) }
        a1.engine.start()
        await #expect(throws: SharingError.invalidShareURL("nope")) { try await b.engine.acceptShare(url: "nope") }
        // Bob cannot share alice's game, even once it is shared with him.
        try await b.engine.acceptShare(url: try await shareWithBob(.readWrite).url)
        await #expect(throws: SharingError.notTheOwner(table: "games", primaryKey: "g1", owner: "alice")) {
            try await b.engine.share(record: game)
        }
    }

    @Test func privateTablesAreNeverShared() async throws {
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let engine = try SyncEngine(
            for: database, tableNames: ["games", "players"], privateTableNames: ["games"], container: cloud.container(user: "carol"),
            configuration: SyncEngineConfiguration(deviceID: "c", schedule: nil), startImmediately: true)
        await #expect(throws: SharingError.privateTable("games")) { try await engine.share(record: game) }
    }
}
