import Foundation
import StrataSQLite
import StrataSyncTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// An outside tester's attacks on `supersededByDelete` (Sync.md, "Sending", step 3): a save
/// whose answer was lost goes again; if another device fetched the record and deleted it
/// meanwhile, the retry must not bring it back, and the device deletes its own copy "as it
/// would have had the first answer arrived". An edit the deleter never saw still wins.
///
/// Where the docs promise "as it would have had the first answer arrived", a test runs the
/// same steps twice, once with the answer lost and once with it arriving, and compares.
@Suite(.timeLimit(.minutes(4)))
struct OutsideSupersededByDeleteTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    enum Retry: String, CaseIterable, Sendable { case sendFirst, fetchFirst }

    static func names(in cloud: MockCloud, zone: CloudZoneID = zone) -> [String] {
        cloud.records(in: zone).map(\.id.name).sorted()
    }

    /// A seeded game g0 sent whole, so the zone (and its key) exist before any lost answer.
    static func seed(_ phone: SyncTestDevice, _ others: [SyncTestDevice]) async throws {
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g0', 'Seed')")
        try await phone.engine.sendChanges()
        for device in others { try await device.engine.fetchChanges() }
    }

    /// The phone's send, with the answers of its first `count` modify requests lost (they
    /// applied), or all of them arriving when `lose` is false.
    static func send(_ phone: SyncTestDevice, cloud: MockCloud, lose: Bool, count: Int = 1) async throws {
        guard lose else {
            try await phone.engine.sendChanges()
            return
        }
        cloud.loseNextResponses(count, operations: [.modifyRecords])
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        cloud.clearInjectedFaults()
    }

    static func retry(_ phone: SyncTestDevice, _ retry: Retry) async throws {
        if retry == .fetchFirst { try await phone.engine.fetchChanges() }
        try await phone.engine.sendChanges()
        try await phone.engine.fetchChanges()
    }

    /// Syncs every device a few rounds (bounded): each send must finish.
    static func settle(_ devices: [SyncTestDevice]) async throws {
        for _ in 0..<3 {
            for device in devices { try await device.engine.syncChanges() }
        }
    }

    /// Every device holds the same rows and nothing waits to be sent; returns the rows.
    @discardableResult
    static func expectConverged(_ devices: [SyncTestDevice], _ comment: Comment? = nil) async throws -> [String] {
        let first = try await devices[0].rows()
        for device in devices {
            #expect(try await device.rows() == first, "\(device.id) differs from \(devices[0].id): \(comment ?? "")")
            #expect(try await device.pending() == 0, "\(device.id) has changes pending: \(comment ?? "")")
        }
        return first
    }

    // MARK: - Batches larger than one request

    /// One transaction of five games and three players, sent in requests of 1, 2 or 3 records;
    /// the answers of the first one or two requests lost. The tablet deletes every game it
    /// fetched (the cloud's, so exactly those that landed). Whatever landed and was deleted
    /// stays deleted; what never landed arrives; the players follow their games.
    @Test(arguments: [1, 2, 3], [1, 2])
    func lostAnswersOnSplitTransactionsKeepEveryDeleteMadeAfterThem(batchSize: Int, lost: Int) async throws {
        for retry in Retry.allCases {
            let cloud = MockCloud()
            let phone = try await SyncTestDevice("phone", cloud: cloud, batchSize: batchSize)
            let tablet = try await SyncTestDevice("tablet", cloud: cloud)
            try await Self.seed(phone, [tablet])
            try await phone.execute(
                """
                INSERT INTO games (id, title, score) VALUES ('g1', 'A', 1), ('g2', 'B', 2), ('g3', 'C', 3), ('g4', 'D', 4), ('g5', 'E', 5);
                INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann'), ('p2', 'g2', 'Bo'), ('p5', 'g5', 'Cy');
                """)
            try await Self.send(phone, cloud: cloud, lose: true, count: lost)
            try await tablet.engine.fetchChanges()
            let deleted = try await tablet.strings("SELECT id FROM games WHERE id <> 'g0' ORDER BY id")
            #expect(!deleted.isEmpty)
            try await tablet.execute("DELETE FROM games WHERE id <> 'g0'")
            try await tablet.engine.sendChanges()

            try await Self.retry(phone, retry)
            try await Self.settle([phone, tablet])
            let games = ["g0", "g1", "g2", "g3", "g4", "g5"].filter { !deleted.contains($0) }
            let players = [("p1", "g1"), ("p2", "g2"), ("p5", "g5")].filter { games.contains($0.1) }.map(\.0)
            let comment: Comment = "batch \(batchSize), \(lost) lost, \(retry), tablet deleted \(deleted)"
            #expect(try await phone.strings("SELECT id FROM games ORDER BY id") == games, comment)
            #expect(try await phone.strings("SELECT id FROM players ORDER BY id") == players, comment)
            #expect(
                Self.names(in: cloud) == (games.map { "\($0):games" } + players.map { "\($0):players" }).sorted(), comment)
            try await Self.expectConverged([phone, tablet], comment)
        }
    }

    // MARK: - Parents and children

    /// The lost request held a game and its player; the tablet moved the player to g0, then
    /// deleted the game. The player was not deleted: had the answer arrived, the phone would
    /// have fetched the move before the delete. It must survive the retry under g0.
    @Test(arguments: Retry.allCases)
    func aChildMovedAwayBeforeItsParentWasDeletedSurvivesTheRetry(retry: Retry) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud)
        try await Self.seed(phone, [tablet])
        try await phone.execute(
            "INSERT INTO games (id, title) VALUES ('g1', 'Chess'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')")
        try await Self.send(phone, cloud: cloud, lose: true)
        try await tablet.engine.fetchChanges()
        try await tablet.execute("UPDATE players SET gameID = 'g0' WHERE id = 'p1'")
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        try await Self.retry(phone, retry)
        try await Self.settle([phone, tablet])
        let rows = try await Self.expectConverged([phone, tablet])
        #expect(rows == ["game g0 'Seed' NULL", "player p1 'g0' 'Ann'"])
        #expect(Self.names(in: cloud) == ["g0:games", "p1:players"])
    }

    /// A player already synced under g0 moved by the phone under the game whose answer was
    /// lost, after that send; the tablet deletes the game without knowing of the move. The
    /// outcome must be the one with the answer arriving.
    @Test(arguments: Retry.allCases)
    func aChildMovedUnderTheLostParentEndsAsIfTheAnswerHadArrived(retry: Retry) async throws {
        var outcomes: [[String]] = []
        for lose in [false, true] {
            let cloud = MockCloud()
            let phone = try await SyncTestDevice("phone", cloud: cloud)
            let tablet = try await SyncTestDevice("tablet", cloud: cloud)
            try await phone.execute(
                "INSERT INTO games (id, title) VALUES ('g0', 'Seed'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g0', 'Ann')")
            try await phone.engine.sendChanges()
            try await phone.engine.fetchChanges()
            try await tablet.engine.fetchChanges()
            try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Chess')")
            try await Self.send(phone, cloud: cloud, lose: lose)
            // With the answer arriving, the phone's token is brought past its own save, as a
            // push's fetch brings it: otherwise the reference's fetch would carry p1's cloud
            // copy back with g1's tombstone and restore it, which is the stale token's doing,
            // not the answer's (found by the author while checking this test's first failure).
            if !lose { try await phone.engine.fetchChanges() }
            try await phone.execute("UPDATE players SET gameID = 'g1' WHERE id = 'p1'")
            try await tablet.engine.fetchChanges()
            try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
            try await tablet.engine.sendChanges()

            try await Self.retry(phone, retry)
            try await Self.settle([phone, tablet])
            outcomes.append(try await Self.expectConverged([phone, tablet], "lose \(lose)") + Self.names(in: cloud))
        }
        #expect(outcomes[1] == outcomes[0], "with the answer lost vs. arriving")
    }

    /// A player added by the phone under the game after the lost send (the tablet never saw
    /// it), the game deleted on the tablet: as with the answer arriving.
    @Test(arguments: Retry.allCases)
    func aChildAddedUnderTheLostParentEndsAsIfTheAnswerHadArrived(retry: Retry) async throws {
        var outcomes: [[String]] = []
        for lose in [false, true] {
            let cloud = MockCloud()
            let phone = try await SyncTestDevice("phone", cloud: cloud)
            let tablet = try await SyncTestDevice("tablet", cloud: cloud)
            try await Self.seed(phone, [tablet])
            try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Chess')")
            try await Self.send(phone, cloud: cloud, lose: lose)
            try await phone.execute("INSERT INTO players (id, gameID, name) VALUES ('p9', 'g1', 'Late')")
            try await tablet.engine.fetchChanges()
            try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
            try await tablet.engine.sendChanges()

            try await Self.retry(phone, retry)
            try await Self.settle([phone, tablet])
            outcomes.append(try await Self.expectConverged([phone, tablet], "lose \(lose)") + Self.names(in: cloud))
        }
        #expect(outcomes[1] == outcomes[0], "with the answer lost vs. arriving")
    }

    // MARK: - Edits made while the retry travels

    enum Meanwhile: String, CaseIterable, Sendable { case edit, delete, sameValue }

    /// The retry's batch is built, then, while it travels, the phone changes the row: an edit
    /// (newer than the delete: it wins), a delete of its own (it stays deleted), or an update
    /// writing the same value (nothing newer: the delete stands). Every send ends.
    @Test(arguments: Meanwhile.allCases)
    func aChangeMadeWhileTheRetryTravels(meanwhile: Meanwhile) async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let database = try DatabaseQueue()
        let requests = Atomic<Int>(0)
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let index = requests.add(1, ordering: .relaxed).newValue
            if index == 2 {
                // The seed went as request 1; request 2 is the lost one.
                _ = try await next.modifyRecords(saving: saving, deleting: deleting)
                throw CloudError.networkFailure
            }
            if index == 3 {
                time.advance()
                let sql =
                    switch meanwhile {
                    case .edit: "UPDATE games SET score = 42 WHERE id = 'g1'"
                    case .delete: "DELETE FROM games WHERE id = 'g1'"
                    case .sameValue: "UPDATE games SET score = score WHERE id = 'g1'"
                    }
                // From a task of its own: nothing of the engine's task (its task-locals) reaches
                // the app's write.
                try await Task.detached { try await database.write { db in try db.execute(sql: sql) } }.value
            }
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        let phone = try await SyncTestDevice("phone", container: container, time: time, database: database)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time)
        try await Self.seed(phone, [tablet])
        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        try await phone.engine.sendChanges()
        #expect(requests.load(ordering: .relaxed) >= 3)
        try await Self.settle([phone, tablet])
        let rows = try await Self.expectConverged([phone, tablet], "\(meanwhile)")
        switch meanwhile {
        case .edit: #expect(rows == ["game g0 'Seed' NULL", "game g1 'Chess' 42"])
        case .delete, .sameValue: #expect(rows == ["game g0 'Seed' NULL"])
        }
    }

    // MARK: - Three devices

    enum LaptopSends: String, CaseIterable, Sendable { case beforeThePhoneRetries, afterThePhoneRetries }

    /// The laptop fetched the lost-answer save and edited the title; the tablet deleted the
    /// game without seeing that edit. The laptop's edit is newer than what the delete removed:
    /// it wins over the delete, whichever of the laptop and the phone goes first.
    @Test(arguments: LaptopSends.allCases, [SyncEncryption.disabled, .endToEnd])
    func anEditTheDeleterNeverSawWinsOnEveryDevice(laptopSends: LaptopSends, encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let phone = try await SyncTestDevice("phone", cloud: cloud, time: time, encryption: encryption)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, time: time, encryption: encryption)
        try await Self.seed(phone, [tablet, laptop])
        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
        try await Self.send(phone, cloud: cloud, lose: true)
        try await laptop.engine.fetchChanges()
        try await laptop.execute("UPDATE games SET title = 'Laptop' WHERE id = 'g1'")
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        if laptopSends == .beforeThePhoneRetries { try await laptop.engine.sendChanges() }
        try await phone.engine.sendChanges()
        if laptopSends == .afterThePhoneRetries { try await laptop.engine.sendChanges() }
        try await Self.settle([phone, tablet, laptop])
        let rows = try await Self.expectConverged([phone, tablet, laptop])
        #expect(rows == ["game g0 'Seed' NULL", "game g1 'Laptop' 1"])
    }

    /// The laptop's edit reached the cloud before the tablet fetched and deleted: the delete
    /// saw everything, and the phone's retry (older in every field) must not revive the game.
    @Test func anEditTheDeleterSawStaysDeletedOnEveryDevice() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let phone = try await SyncTestDevice("phone", cloud: cloud, time: time)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, time: time)
        try await Self.seed(phone, [tablet, laptop])
        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
        try await Self.send(phone, cloud: cloud, lose: true)
        try await laptop.engine.fetchChanges()
        try await laptop.execute("UPDATE games SET title = 'Laptop' WHERE id = 'g1'")
        try await laptop.engine.sendChanges()
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        try await Self.retry(phone, .sendFirst)
        try await Self.settle([phone, tablet, laptop])
        #expect(try await Self.expectConverged([phone, tablet, laptop]) == ["game g0 'Seed' NULL"])
        #expect(Self.names(in: cloud) == ["g0:games"])
    }

    /// Several fields: the phone's lost edit of the title, the laptop's edit of the score
    /// (merged over the phone's), the tablet's delete made after fetching only the first
    /// state. As with the answer arriving.
    @Test(arguments: Retry.allCases)
    func editsOfDifferentFieldsAndADeleteAfterAPartialFetchEndAsIfTheAnswerHadArrived(retry: Retry) async throws {
        var outcomes: [[String]] = []
        for lose in [false, true] {
            let cloud = MockCloud()
            let time = ManualWallClock()
            let phone = try await SyncTestDevice("phone", cloud: cloud, time: time)
            let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time)
            let laptop = try await SyncTestDevice("laptop", cloud: cloud, time: time)
            try await Self.seed(phone, [tablet, laptop])
            try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
            try await phone.engine.sendChanges()
            try await tablet.engine.fetchChanges()
            try await laptop.engine.fetchChanges()
            try await phone.execute("UPDATE games SET title = 'Phone' WHERE id = 'g1'")
            try await Self.send(phone, cloud: cloud, lose: lose)
            try await laptop.execute("UPDATE games SET score = 7 WHERE id = 'g1'")
            try await laptop.engine.sendChanges()
            // The tablet deletes what it fetched before the phone's edit.
            try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
            try await tablet.engine.sendChanges()

            try await Self.retry(phone, retry)
            try await Self.settle([phone, tablet, laptop])
            outcomes.append(try await Self.expectConverged([phone, tablet, laptop], "lose \(lose)") + Self.names(in: cloud))
        }
        #expect(outcomes[1] == outcomes[0], "with the answer lost vs. arriving")
        #expect(outcomes[1].first == "game g0 'Seed' NULL")
    }

    // MARK: - Deletes retried, keys inserted again

    enum Reinserter: String, CaseIterable, Sendable { case phoneBeforeRetrying, tabletAfterDeleting }

    /// The tablet's delete loses its answer and goes again; then the same key is inserted anew
    /// on the phone (before its retry) or on the tablet (after its delete). The new row is a
    /// new record with new versions: it must end on every device, as with the answer arriving.
    @Test(arguments: Reinserter.allCases)
    func aKeyInsertedAgainAfterARetriedDeleteEndsAsIfTheAnswerHadArrived(reinserter: Reinserter) async throws {
        var outcomes: [[String]] = []
        for lose in [false, true] {
            let cloud = MockCloud()
            let time = ManualWallClock()
            let phone = try await SyncTestDevice("phone", cloud: cloud, time: time)
            let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time)
            try await Self.seed(phone, [tablet])
            try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1)")
            try await Self.send(phone, cloud: cloud, lose: lose)
            try await tablet.engine.fetchChanges()
            try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
            try await Self.send(tablet, cloud: cloud, lose: lose)
            try await tablet.engine.sendChanges()
            switch reinserter {
            case .phoneBeforeRetrying:
                try await phone.execute("DELETE FROM games WHERE id = 'g1'; INSERT INTO games (id, title) VALUES ('g1', 'Phone again')")
            case .tabletAfterDeleting:
                try await tablet.execute("INSERT INTO games (id, title) VALUES ('g1', 'Tablet again')")
                try await tablet.engine.sendChanges()
            }
            try await Self.retry(phone, .sendFirst)
            try await Self.settle([phone, tablet])
            outcomes.append(try await Self.expectConverged([phone, tablet], "lose \(lose)") + Self.names(in: cloud))
        }
        #expect(outcomes[1] == outcomes[0], "with the answer lost vs. arriving")
        let expected = reinserter == .phoneBeforeRetrying ? "game g1 'Phone again' NULL" : "game g1 'Tablet again' NULL"
        #expect(outcomes[1].contains(expected))
    }

    // MARK: - A new engine

    /// The phone's engine goes away after the lost answer (the app quit); a new engine over the
    /// same database retries. The delete must stand; then the key inserted again travels.
    @Test(arguments: [SyncEncryption.disabled, .endToEnd])
    func aNewEngineOverTheSameDatabaseRetries(encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        var phone = try await SyncTestDevice("phone", cloud: cloud, time: time, encryption: encryption)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time, encryption: encryption)
        try await Self.seed(phone, [tablet])
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Chess'), ('g2', 'Go')")
        try await Self.send(phone, cloud: cloud, lose: true)
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        let database = phone.database
        phone = try await SyncTestDevice("phone", cloud: cloud, time: time, schema: "", database: database, encryption: encryption)
        #expect(try await phone.pending() == 2)
        try await Self.retry(phone, .sendFirst)
        try await Self.settle([phone, tablet])
        #expect(try await Self.expectConverged([phone, tablet]) == ["game g0 'Seed' NULL", "game g2 'Go' NULL"])

        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Again')")
        try await Self.settle([phone, tablet])
        #expect(
            try await Self.expectConverged([phone, tablet]) == [
                "game g0 'Seed' NULL", "game g1 'Again' NULL", "game g2 'Go' NULL",
            ])
    }

    // MARK: - Counters

    static let counters: [MergePolicy] = [.counter(table: "games", column: "score")]

    /// A counter column: the lost-answer save's state travels as one more field. The delete
    /// must stand; an increment made after the lost answer is an edit the deleter never saw
    /// and wins with every lane; a key inserted again after the delete starts afresh.
    @Test(arguments: [false, true])
    func aCounterRecordDeletedAfterItsLostAnswer(incrementAfter: Bool) async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let phone = try await SyncTestDevice("phone", cloud: cloud, time: time, mergePolicies: Self.counters)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time, mergePolicies: Self.counters)
        try await Self.seed(phone, [tablet])
        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 5)")
        try await Self.send(phone, cloud: cloud, lose: true)
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()
        if incrementAfter { try await phone.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'") }

        try await Self.retry(phone, .sendFirst)
        try await Self.settle([phone, tablet])
        let rows = try await Self.expectConverged([phone, tablet], "increment after: \(incrementAfter)")
        if incrementAfter {
            #expect(rows == ["game g0 'Seed' NULL", "game g1 'Poker' 6"])
            return
        }
        #expect(rows == ["game g0 'Seed' NULL"])
        #expect(Self.names(in: cloud) == ["g0:games"])

        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker again', 1)")
        try await Self.settle([phone, tablet])
        try await tablet.execute("UPDATE games SET score = score + 2 WHERE id = 'g1'")
        try await Self.settle([phone, tablet])
        #expect(try await Self.expectConverged([phone, tablet]) == ["game g0 'Seed' NULL", "game g1 'Poker again' 3"])
    }

    /// A counter incremented concurrently on the tablet before it deleted the record: nothing
    /// of it survives the phone's retry (the delete saw the tablet's own lane).
    @Test func aCounterIncrementedElsewhereThenDeletedStaysDeleted() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let phone = try await SyncTestDevice("phone", cloud: cloud, time: time, mergePolicies: Self.counters)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time, mergePolicies: Self.counters)
        try await Self.seed(phone, [tablet])
        try await phone.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 5)")
        try await phone.engine.sendChanges()
        try await tablet.engine.fetchChanges()
        try await phone.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await Self.send(phone, cloud: cloud, lose: true)
        try await tablet.execute("UPDATE games SET score = score + 10 WHERE id = 'g1'")
        try await tablet.engine.syncChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        try await Self.retry(phone, .fetchFirst)
        try await Self.settle([phone, tablet])
        #expect(try await Self.expectConverged([phone, tablet]) == ["game g0 'Seed' NULL"])
    }

    // MARK: - Records that left a zone and came back

    static let turnsSchema =
        SyncTestDevice.schemaSQL + """
            CREATE TABLE turns (
                id TEXT PRIMARY KEY NOT NULL,
                playerID TEXT REFERENCES players(id) ON DELETE CASCADE,
                points INTEGER
            );
            """

    /// A participant moves a player of the owner's shared game under a game of their own (the
    /// player and its turn are saved in the participant's zone and deleted from the owner's),
    /// then back, editing nothing else. The turn's copy saved again in the owner's zone carries
    /// the same versions as the copy that was deleted there. It is not a lost answer sent
    /// again: nobody deleted the turn, and it must not be deleted anywhere.
    @Test func aSubtreeMovedToAnotherZoneAndBackKeepsItsUnchangedChildren() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        func device(_ id: String, _ user: String) async throws -> SyncTestDevice {
            try await SyncTestDevice(
                id, cloud: cloud, user: user, time: time, schema: Self.turnsSchema, tables: ["games", "players", "turns"])
        }
        let alice = try await device("a1", "alice")
        let bob = try await device("b", "bob")
        // Sharing needs running engines; without a schedule they sync only when told to.
        for device in [alice, bob] { device.engine.start() }
        try await alice.execute(
            """
            INSERT INTO games (id, title) VALUES ('g1', 'Shared');
            INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob');
            INSERT INTO turns (id, playerID, points) VALUES ('t1', 'p1', 3);
            """)
        try await alice.engine.sendChanges()
        let shared = try await alice.engine.share(record: SharedGame(id: "g1")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        }
        try await bob.engine.acceptShare(url: shared.url)
        func syncAll() async throws {
            for device in [alice, bob, alice, bob] { try await device.engine.syncChanges() }
        }
        try await syncAll()
        #expect(try await bob.strings("SELECT id FROM turns") == ["t1"])

        try await bob.execute("INSERT INTO games (id, title) VALUES ('bg', 'Bob''s')")
        try await bob.execute("UPDATE players SET gameID = 'bg' WHERE id = 'p1'")
        try await syncAll()
        #expect(Self.names(in: cloud, zone: CloudZoneID(name: "strata.default", owner: "bob")) == ["bg:games", "p1:players", "t1:turns"])
        // The old copies left the owner's zone: the cloud keeps their tombstones.
        #expect(Self.names(in: cloud) == ["g1:games"])
        #expect(try await alice.strings("SELECT id FROM turns").isEmpty)

        try await bob.execute("UPDATE players SET gameID = 'g1' WHERE id = 'p1'")
        try await syncAll()
        #expect(try await bob.strings("SELECT id || ' ' || playerID || ' ' || points FROM turns") == ["t1 p1 3"])
        #expect(try await alice.strings("SELECT id || ' ' || playerID || ' ' || points FROM turns") == ["t1 p1 3"])
        #expect(Self.names(in: cloud) == ["g1:games", "p1:players", "t1:turns"])
        #expect(try await bob.pending() == 0)
    }

    // MARK: - Resynchronizing

    /// `resynchronize()` "uploads and reconciles everything without deleting a local row"
    /// (Sync.md, "Syncing everything again"): it marks every record to be sent again with its
    /// versions kept. A record deleted elsewhere that this device has not fetched yet goes
    /// with versions no newer than its tombstone's. The docs promise the local row stays.
    @Test func resynchronizingDeletesNoLocalRowEvenOverATombstone() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let phone = try await SyncTestDevice("phone", cloud: cloud, time: time)
        let tablet = try await SyncTestDevice("tablet", cloud: cloud, time: time)
        try await Self.seed(phone, [tablet])
        try await phone.execute("INSERT INTO games (id, title) VALUES ('g1', 'Chess')")
        try await phone.engine.sendChanges()
        try await tablet.engine.fetchChanges()
        try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
        try await tablet.engine.sendChanges()

        let before = try await phone.rows()
        try await phone.engine.resynchronize()
        #expect(try await phone.rows() == before, "resynchronize() deleted a local row")
    }
}
