import Foundation
import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

@Table("games") struct ConformanceGame {
    let id: String
    var title = ""
    var score: Int?
}

/// Whole engines syncing through each cloud: what users see, not just what the protocol says.
@Suite(.timeLimit(.minutes(5))) struct EngineThroughCloudTests {
    /// The wall clock of a test's devices.
    let clock = ManualWallClock()

    /// A device signed in as `user` to the cloud under test, started (without a schedule).
    func device(_ id: String, user: String) async throws -> SyncTestDevice {
        let device = try await SyncTestDevice(id, container: TestCloud.current.container(user: user), time: clock)
        device.engine.start()
        return device
    }

    @Test(arguments: CloudKind.available) func twoDevicesConvergeAfterEditingApart(_ kind: CloudKind) async throws {
        try await kind.run {
            let phone = try await device("phone", user: "alice")
            let laptop = try await device("laptop", user: "alice")
            try await phone.execute(
                "INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 1); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')"
            )
            try await phone.engine.syncChanges()
            try await laptop.engine.syncChanges()
            #expect(try await laptop.rows() == ["game g1 'Poker' 1", "player p1 'g1' 'Ann'"])

            try await phone.execute("UPDATE games SET title = 'Poker night' WHERE id = 'g1'")
            try await laptop.execute("UPDATE games SET score = 5 WHERE id = 'g1'")
            try await laptop.execute("DELETE FROM players WHERE id = 'p1'")
            try await phone.engine.syncChanges()
            try await laptop.engine.syncChanges()
            try await phone.engine.syncChanges()
            #expect(try await phone.rows() == ["game g1 'Poker night' 5"])
            #expect(try await laptop.rows() == phone.rows())
            #expect(try await phone.engine.pendingCount() == 0)
            #expect(try await laptop.engine.pendingCount() == 0)
        }
    }

    @Test(arguments: CloudKind.available) func aSharedGameTravelsBothWaysAndLeavesWhenUnshared(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = try await device("a", user: "alice")
            let bob = try await device("b", user: "bob")
            try await alice.execute(
                "INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Secret'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob')"
            )
            try await alice.engine.sendChanges()
            let shared = try await alice.engine.share(record: ConformanceGame(id: "g1", title: "Poker")) { share in
                share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            }
            try await bob.engine.acceptShare(shared)
            #expect(try await bob.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])

            try await bob.execute(
                "INSERT INTO players (id, gameID, name) VALUES ('p2', 'g1', 'Bob'); UPDATE games SET score = 7 WHERE id = 'g1'")
            try await bob.engine.syncChanges()
            try await alice.engine.syncChanges()
            #expect(
                try await alice.rows() == ["game g1 'Poker' 7", "game g2 'Secret' NULL", "player p1 'g1' 'Blob'", "player p2 'g1' 'Bob'"])

            try await alice.engine.unshare(record: ConformanceGame(id: "g1", title: "Poker"))
            try await bob.engine.syncChanges()
            #expect(try await bob.rows() == [])
            #expect(try await alice.rows().count == 4)
        }
    }

    @Test(arguments: CloudKind.available) func aReadOnlyParticipantsEditIsRefusedEverywhere(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = try await device("a", user: "alice")
            let bob = try await device("b", user: "bob")
            try await alice.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
            try await alice.engine.sendChanges()
            let shared = try await alice.engine.share(record: ConformanceGame(id: "g1", title: "Poker")) { share in
                share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            }
            try await bob.engine.acceptShare(url: shared.url)
            await #expect(throws: (any Error).self) { try await bob.execute("UPDATE games SET title = 'Mine' WHERE id = 'g1'") }
            try await bob.engine.syncChanges()
            try await alice.engine.syncChanges()
            #expect(try await alice.rows() == ["game g1 'Poker' NULL"])
            #expect(try await bob.rows() == ["game g1 'Poker' NULL"])
        }
    }

    /// A new device stores each record it fetched as JSON that reads back as the record the
    /// cloud holds (through the service, the page's own text: `ArrivedRecordText`), with its
    /// versions readable by `json_extract`, sealed or not; and edits on top of that stored copy
    /// travel back.
    @Test(arguments: CloudKind.available, [true, false])
    func aFetchedRecordsStoredJSONReadsBackAsTheCloudsRecord(_ kind: CloudKind, sealed: Bool) async throws {
        try await kind.run {
            let encryption: SyncEncryption = sealed ? .endToEnd : .disabled
            let container = { TestCloud.current.container(user: "alice") }
            let phone = try await SyncTestDevice("phone", container: container(), time: clock, encryption: encryption)
            phone.engine.start()
            let titles = ["Poker", "é😀 \"night\" \\ , : {x}", "tab\tnew\nline", "", String(repeating: "long ", count: 80)]
            try await phone.execute(
                titles.enumerated().map {
                    "INSERT INTO games (id, title, score) VALUES ('g\($0)', '\($1)', \($0 == 2 ? "NULL" : "\($0)"));"
                }
                .joined() + "INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann');")
            try await phone.engine.syncChanges()
            // Pages of two: the first comes with the database's changes, the rest by the zone's
            // own route, which the service writes from the texts PostgreSQL returns.
            let laptop = try await SyncTestDevice(
                "laptop", container: container(), time: clock, fetchPageSize: 2, encryption: encryption)
            laptop.engine.start()
            try await laptop.engine.syncChanges()
            #expect(try await laptop.rows() == phone.rows())

            let held = try await TestCloud.current.records(in: CloudZoneID(name: "strata.default", owner: "alice"))
            var expected: [String: CloudRecord] = [:]
            for record in held { expected[record.id.name] = try await laptop.engine.openCloudRecord(record) }
            let stored = try await laptop.database.read { db in
                try db.fetchAll(
                    sql: """
                        SELECT recordPrimaryKey || ':' || recordType, lastKnownServerRecord, fieldVersions,
                            json_extract(fieldVersions, '$.name'), json_extract(fieldVersions, '$.title')
                        FROM strata_sync.metadata
                        """
                ) { row in (try row[0] as String, try row[1] as String, try row[2] as String, try row[3] as String?, try row[4] as String?)
                }
            }
            #expect(stored.count == titles.count + 1)
            if kind == .service {
                // The page's own text, kept: PostgreSQL orders an object's keys by length, so the
                // player's `name` comes before its `gameID`, where Strata's writer sorts them.
                // The player is the last record sent, in a page of the zone's route.
                let player = try #require(stored.first { $0.0 == "p1:players" })
                let name = try #require(player.1.range(of: #""name":"#))
                let gameID = try #require(player.1.range(of: #""gameID":"#))
                #expect(name.lowerBound < gameID.lowerBound, "\(player.1)")
            }
            for (name, json, versions, nameVersion, titleVersion) in stored {
                // Compact, whatever the cloud's store writes out (PostgreSQL spaces `jsonb`).
                var compact = JSONWriter()
                compact.compactJSON(json)
                #expect(compact.text == json)
                let record = try JSONDecoder().decode(CloudRecord.self, from: Data(json.utf8))
                #expect(record == expected[name], "\(name): \(json)")
                #expect(try JSONDecoder().decode([String: HybridTimestamp].self, from: Data(versions.utf8)) == record.fieldVersions)
                #expect((nameVersion ?? titleVersion) == (record.fieldVersions["name"] ?? record.fieldVersions["title"])?.description)
            }

            try await laptop.execute("UPDATE games SET score = 42 WHERE id = 'g1'; UPDATE players SET name = 'Bo' WHERE id = 'p1'")
            try await laptop.engine.syncChanges()
            try await phone.engine.syncChanges()
            #expect(try await phone.rows() == laptop.rows())
            #expect(try await phone.strings("SELECT CAST(score AS TEXT) FROM games WHERE id = 'g1'") == ["42"])
        }
    }

    @Test(arguments: CloudKind.available) func anotherDeviceHearsOfAChange(_ kind: CloudKind) async throws {
        try await kind.run {
            let cloud = TestCloud.current
            var hints = cloud.container(user: "alice").changeHints().makeAsyncIterator()
            // The store's first hint says it listens; the client's, that its stream connected
            // (and then the store's, relayed). Changes after them are heard.
            let greetings = [CloudKind.mock: 0, .store: 1, .service: 2][kind] ?? 0
            for _ in 0..<greetings { #expect(await hints.next() != nil) }
            let phone = try await device("phone", user: "alice")
            try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
            try await phone.engine.sendChanges()
            #expect(await hints.next() != nil)
        }
    }
}
