import Foundation
import StrataQueries
import StrataSQLite
@testable import StrataSync
import Synchronization
import Testing

@Table("games") struct ConformanceGame {
    let id: String
    var title = ""
    var score: Int?
}

/// A wall clock the test moves by hand, shared by a test's devices.
final class ConformanceClock: Sendable {
    let milliseconds = Atomic<Int64>(1_700_000_000_000)
}

/// Whole engines syncing through each cloud: what users see, not just what the protocol says.
@Suite(.timeLimit(.minutes(5))) struct EngineThroughCloudTests {
    /// One device: its own SQLite database and engine, signed in as `user`.
    struct Device {
        static let schema = """
            CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL DEFAULT '', score INTEGER);
            CREATE TABLE players (id TEXT PRIMARY KEY NOT NULL, gameID TEXT REFERENCES games(id) ON DELETE CASCADE, name TEXT);
            """
        let database: DatabaseQueue
        let engine: SyncEngine
        let clock: ConformanceClock

        init(_ id: String, user: String, cloud: TestCloud, clock: ConformanceClock) throws {
            database = try DatabaseQueue()
            try database.write { db in try db.execute(sql: Self.schema) }
            self.clock = clock
            let read: @Sendable () -> Int64 = { [clock] in clock.milliseconds.load(ordering: .relaxed) }
            engine = try SyncEngine(
                for: database, tableNames: ["games", "players"], container: cloud.container(user: user),
                configuration: SyncEngineConfiguration(deviceID: id, physicalTime: read, schedule: nil),
                startImmediately: false)
            engine.start()
        }

        func execute(_ sql: String) throws {
            clock.milliseconds.add(1_000, ordering: .relaxed)
            try database.write { db in try db.execute(sql: sql) }
        }

        func rows() throws -> [String] {
            try database.read { db in
                try String.fetchAll(db, sql: "SELECT 'game ' || id || ' ' || quote(title) || ' ' || quote(score) FROM games ORDER BY id")
                    + String.fetchAll(db, sql: "SELECT 'player ' || id || ' ' || quote(gameID) || ' ' || quote(name) FROM players ORDER BY id")
            }
        }
    }

    let clock = ConformanceClock()

    func device(_ id: String, user: String) throws -> Device {
        try Device(id, user: user, cloud: TestCloud.current, clock: clock)
    }

    @Test(arguments: CloudKind.available) func twoDevicesConvergeAfterEditingApart(_ kind: CloudKind) async throws {
        try await kind.run {
            let phone = try device("phone", user: "alice")
            let laptop = try device("laptop", user: "alice")
            try phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 1); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')")
            try await phone.engine.syncChanges()
            try await laptop.engine.syncChanges()
            #expect(try laptop.rows() == ["game g1 'Poker' 1", "player p1 'g1' 'Ann'"])

            try phone.execute("UPDATE games SET title = 'Poker night' WHERE id = 'g1'")
            try laptop.execute("UPDATE games SET score = 5 WHERE id = 'g1'")
            try laptop.execute("DELETE FROM players WHERE id = 'p1'")
            try await phone.engine.syncChanges()
            try await laptop.engine.syncChanges()
            try await phone.engine.syncChanges()
            #expect(try phone.rows() == ["game g1 'Poker night' 5"])
            #expect(try laptop.rows() == phone.rows())
            #expect(try await phone.engine.pendingCount() == 0)
            #expect(try await laptop.engine.pendingCount() == 0)
        }
    }

    @Test(arguments: CloudKind.available) func aSharedGameTravelsBothWaysAndLeavesWhenUnshared(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = try device("a", user: "alice")
            let bob = try device("b", user: "bob")
            try alice.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Secret'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob')")
            try await alice.engine.sendChanges()
            let shared = try await alice.engine.share(record: ConformanceGame(id: "g1", title: "Poker")) { share in
                share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            }
            try await bob.engine.acceptShare(shared)
            #expect(try bob.rows() == ["game g1 'Poker' NULL", "player p1 'g1' 'Blob'"])

            try bob.execute("INSERT INTO players (id, gameID, name) VALUES ('p2', 'g1', 'Bob'); UPDATE games SET score = 7 WHERE id = 'g1'")
            try await bob.engine.syncChanges()
            try await alice.engine.syncChanges()
            #expect(try alice.rows() == ["game g1 'Poker' 7", "game g2 'Secret' NULL", "player p1 'g1' 'Blob'", "player p2 'g1' 'Bob'"])

            try await alice.engine.unshare(record: ConformanceGame(id: "g1", title: "Poker"))
            try await bob.engine.syncChanges()
            #expect(try bob.rows() == [])
            #expect(try alice.rows().count == 4)
        }
    }

    @Test(arguments: CloudKind.available) func aReadOnlyParticipantsEditIsRefusedEverywhere(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = try device("a", user: "alice")
            let bob = try device("b", user: "bob")
            try alice.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
            try await alice.engine.sendChanges()
            let shared = try await alice.engine.share(record: ConformanceGame(id: "g1", title: "Poker")) { share in
                share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
            }
            try await bob.engine.acceptShare(url: shared.url)
            #expect(throws: (any Error).self) { try bob.execute("UPDATE games SET title = 'Mine' WHERE id = 'g1'") }
            try await bob.engine.syncChanges()
            try await alice.engine.syncChanges()
            #expect(try alice.rows() == ["game g1 'Poker' NULL"])
            #expect(try bob.rows() == ["game g1 'Poker' NULL"])
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
            let phone = try device("phone", user: "alice")
            try phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
            try await phone.engine.sendChanges()
            #expect(await hints.next() != nil)
        }
    }
}
