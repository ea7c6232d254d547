import Foundation
import StrataCloud
import StrataSQLite
import StrataSyncTestSupport
import Testing

@testable import StrataSync

/// An outside tester's attack on the engine fetching its zone's first page with the
/// database's changes: small pages, edits on both sides, pages with more coming, failures
/// between a first page and the rest, expired tokens, plain and end-to-end encrypted.
@Suite(.timeLimit(.minutes(3)))
struct OutsideFirstPageEngineTests {
    static let encryptions: [SyncEncryption] = [.disabled, .endToEnd]
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// Everything sent and fetched on every device, twice over, so conflicts settle.
    static func settle(_ devices: [SyncTestDevice]) async throws {
        for _ in 0..<3 {
            for device in devices {
                try await device.engine.sendChanges()
                try await device.engine.fetchChanges()
            }
        }
    }

    static func expectConverged(
        _ devices: [SyncTestDevice], _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws
    {
        let reference = try await devices[0].rows()
        for device in devices.dropFirst() {
            #expect(try await device.rows() == reference, "\(context): \(device.id) vs \(devices[0].id)", sourceLocation: sourceLocation)
        }
        for device in devices {
            #expect(try await device.pending() == 0, "\(context): \(device.id) pending", sourceLocation: sourceLocation)
        }
    }

    /// Two devices take turns with small pages (1, 2, 3): each round one edits 1 to 4 rows
    /// (inserts, updates, deletes, a delete and re-insert of one id), sends, and the other
    /// fetches; after each fetch the fetching device holds exactly what the sender holds.
    @Test(arguments: [1, 2, 3], encryptions)
    func alternatingEditsWithSmallPages(_ pageSize: Int, _ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, fetchPageSize: pageSize, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: pageSize, encryption: encryption)
        let script = [
            "INSERT INTO games (id, title) VALUES ('g1', 'One')",
            "INSERT INTO games (id, title) VALUES ('g2', 'Two'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')",
            "UPDATE games SET score = 3 WHERE id = 'g1'; UPDATE games SET title = 'Deux' WHERE id = 'g2'; INSERT INTO games (id, title) VALUES ('g3', 'Three')",
            "DELETE FROM games WHERE id = 'g2'",
            "DELETE FROM games WHERE id = 'g3'; INSERT INTO games (id, title) VALUES ('g3', 'Trois')",
            "INSERT INTO players (id, gameID, name) VALUES ('p2', 'g3', 'Bo'), ('p3', 'g3', 'Cy'), ('p4', 'g1', 'Di'); UPDATE players SET name = 'Anna' WHERE id = 'p1'",
            "DELETE FROM players WHERE id IN ('p2', 'p4'); INSERT INTO games (id, title) VALUES ('g2', 'Two again')",
            "UPDATE games SET title = title || '!'",
        ]
        for (round, sql) in script.enumerated() {
            let (writer, reader) = round % 2 == 0 ? (phone, laptop) : (laptop, phone)
            try await writer.execute(sql)
            try await writer.engine.sendChanges()
            try await reader.engine.fetchChanges()
            #expect(try await reader.rows() == (try await writer.rows()), "round \(round), pages of \(pageSize), \(encryption)")
        }
        try await Self.settle([phone, laptop])
        try await Self.expectConverged([phone, laptop], "pages of \(pageSize)")
    }

    /// Exactly a page of changes comes with the list (no zone request); one more than a page
    /// continues with the zone's feed; both arrive whole.
    @Test(arguments: [1, 2, 3], encryptions)
    func thePageBoundary(_ pageSize: Int, _ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: pageSize, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('seed', 'Seed')")
        try await phone.engine.sendChanges()
        try await laptop.engine.fetchChanges()
        try await laptop.engine.fetchChanges()

        var next = 0
        func insert(_ count: Int) async throws {
            let values = (0..<count).map { _ in
                next += 1
                return "('b\(next)', 'Batch \(next)')"
            }
            try await phone.execute("INSERT INTO games (id, title) VALUES " + values.joined(separator: ", "))
            try await phone.engine.sendChanges()
        }
        for count in [pageSize - 1, pageSize] where count > 0 {
            try await insert(count)
            let pages = cloud.requestCount(.fetchZoneChanges)
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == (try await phone.rows()), "\(count) in pages of \(pageSize)")
            #expect(cloud.requestCount(.fetchZoneChanges) == pages, "\(count) changes fit the first page of \(pageSize)")
        }
        try await insert(pageSize + 1)
        let pages = cloud.requestCount(.fetchZoneChanges)
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()), "\(pageSize + 1) in pages of \(pageSize)")
        #expect(cloud.requestCount(.fetchZoneChanges) > pages, "one more than a page goes on with the zone's feed")
        try await Self.expectConverged([phone, laptop], "boundary \(pageSize)")
    }

    /// Both devices edit the same row (same column, other columns, delete against update)
    /// between fetches, with pages of 1 and 2: after sending and fetching both hold the same.
    @Test(arguments: [1, 2], encryptions)
    func bothSidesEditTheSameRowBetweenFetches(_ pageSize: Int, _ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, fetchPageSize: pageSize, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: pageSize, encryption: encryption)
        try await phone.execute(
            "INSERT INTO games (id, title, score) VALUES ('g1', 'One', 1), ('g2', 'Two', 2), ('g3', 'Three', 3); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g3', 'Ann')"
        )
        try await Self.settle([phone, laptop])
        try await Self.expectConverged([phone, laptop], "start")

        let edits: [(String, String)] = [
            ("UPDATE games SET title = 'Phone' WHERE id = 'g1'", "UPDATE games SET title = 'Laptop' WHERE id = 'g1'"),
            ("UPDATE games SET title = 'T' WHERE id = 'g2'", "UPDATE games SET score = 20 WHERE id = 'g2'"),
            (
                "DELETE FROM games WHERE id = 'g3'",
                "UPDATE players SET name = 'Annie' WHERE id = 'p1'; UPDATE games SET score = 30 WHERE id = 'g3'"
            ),
            (
                "DELETE FROM games WHERE id = 'g1'; INSERT INTO games (id, title) VALUES ('g1', 'Reborn')",
                "UPDATE games SET score = 11 WHERE id = 'g1'"
            ),
        ]
        for (round, (onPhone, onLaptop)) in edits.enumerated() {
            try await phone.execute(onPhone)
            try await laptop.execute(onLaptop)
            try await phone.engine.sendChanges()
            try await laptop.engine.fetchChanges()
            try await laptop.engine.sendChanges()
            try await phone.engine.fetchChanges()
            try await Self.settle([phone, laptop])
            try await Self.expectConverged([phone, laptop], "round \(round), pages of \(pageSize)")
        }
    }

    /// The continuation after a first page with more coming fails (the network): the fetch
    /// fails, and the next fetch, with nothing new in the cloud, still brings the rest.
    @Test(arguments: encryptions)
    func aFailureAfterTheFirstPageLosesNothing(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: 2, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('seed', 'Seed')")
        try await phone.engine.sendChanges()
        try await laptop.engine.fetchChanges()
        try await laptop.engine.fetchChanges()

        try await phone.execute(
            "INSERT INTO games (id, title) VALUES " + (0..<9).map { "('g\($0)', 'Game \($0)')" }.joined(separator: ", "))
        try await phone.engine.sendChanges()
        cloud.failNextRequests(1, with: .networkFailure, operations: [.fetchZoneChanges])
        do { try await laptop.engine.fetchChanges() } catch {}
        #expect(cloud.injectedFaults.isEmpty, "the continuation was asked for (and failed)")
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()), "the rest after the first page arrived")

        // The same with the answer of the continuation lost after the cloud read it.
        try await phone.execute(
            "INSERT INTO games (id, title) VALUES " + (0..<9).map { "('h\($0)', 'Game \($0)')" }.joined(separator: ", "))
        try await phone.engine.sendChanges()
        cloud.loseNextResponses(1, operations: [.fetchZoneChanges])
        do { try await laptop.engine.fetchChanges() } catch {}
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()), "after a lost continuation")
        try await Self.expectConverged([phone, laptop], "failures")
    }

    /// The answer carrying the list and the first page is lost after the cloud read it: the
    /// next fetch brings the change all the same.
    @Test(arguments: encryptions)
    func aLostListAndPageIsFetchedAgain(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: 2, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('seed', 'Seed')")
        try await Self.settle([phone, laptop])
        for (round, count) in [1, 5].enumerated() {
            try await phone.execute(
                "INSERT INTO games (id, title) VALUES " + (0..<count).map { "('r\(round)g\($0)', 'G')" }.joined(separator: ", "))
            try await phone.engine.sendChanges()
            cloud.loseNextResponses(1, operations: [.fetchDatabaseChanges])
            do { try await laptop.engine.fetchChanges() } catch {}
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == (try await phone.rows()), "round \(round)")
        }
    }

    /// The zone's feed says the token expired right after the first page (more coming): the
    /// engine falls back to a full refetch and ends with exactly the cloud's rows, a deletion
    /// made meanwhile included.
    @Test(arguments: encryptions)
    func aTokenExpiringAfterTheFirstPage(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: 2, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('a', 'A'), ('b', 'B')")
        try await Self.settle([phone, laptop])
        try await phone.execute(
            "DELETE FROM games WHERE id = 'a'; INSERT INTO games (id, title) VALUES "
                + (0..<7).map { "('g\($0)', 'Game \($0)')" }.joined(separator: ", "))
        try await phone.engine.sendChanges()
        cloud.purgeTombstones(in: Self.zone)
        cloud.failNextRequests(1, with: .changeTokenExpired, operations: [.fetchZoneChanges])
        do { try await laptop.engine.fetchChanges() } catch {}
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()))
        #expect(!(try await laptop.rows()).contains { $0.hasPrefix("game a ") })
    }

    /// The laptop's token expired while both sides changed things: its unsent edits survive
    /// the full refetch and reach the phone; the phone's deletion reaches the laptop.
    @Test(arguments: [1, 3], encryptions)
    func anExpiredTokenWithLocalEditsPending(_ pageSize: Int, _ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, fetchPageSize: pageSize, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: pageSize, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('a', 'A'), ('b', 'B'), ('c', 'C')")
        try await Self.settle([phone, laptop])
        try await phone.execute(
            "DELETE FROM games WHERE id = 'a'; UPDATE games SET title = 'B2' WHERE id = 'b'; INSERT INTO games (id, title) VALUES ('d', 'D')"
        )
        try await phone.engine.sendChanges()
        try await laptop.execute(
            "UPDATE games SET score = 9 WHERE id = 'b'; UPDATE games SET title = 'C-laptop' WHERE id = 'c'; INSERT INTO games (id, title) VALUES ('e', 'E')"
        )
        cloud.purgeTombstones(in: Self.zone)
        try await laptop.engine.fetchChanges()
        #expect(!(try await laptop.rows()).contains { $0.hasPrefix("game a ") }, "the deletion reached the laptop")
        #expect(try await laptop.strings("SELECT title FROM games WHERE id = 'c'") == ["C-laptop"], "a local edit survives the refetch")
        try await Self.settle([laptop, phone])
        try await Self.expectConverged([phone, laptop], "expired, pages of \(pageSize)")
        #expect(
            try await phone.strings("SELECT title || ' ' || ifnull(score, '-') FROM games ORDER BY id") == [
                "B2 9", "C-laptop -", "D -", "E -",
            ])
    }

    /// A first page delivered back to front (children before parents, later edits first):
    /// the laptop still ends with the phone's rows.
    @Test(arguments: encryptions)
    func aFirstPageOutOfOrder(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, encryption: encryption)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, fetchPageSize: 10, encryption: encryption)
        try await phone.execute("INSERT INTO games (id, title) VALUES ('seed', 'Seed')")
        try await Self.settle([phone, laptop])
        try await phone.execute(
            "INSERT INTO games (id, title) VALUES ('g', 'G'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g', 'A'), ('p2', 'g', 'B'); DELETE FROM games WHERE id = 'seed'"
        )
        try await phone.engine.sendChanges()
        cloud.reorderNextFetches(3)
        try await laptop.engine.fetchChanges()
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()))
    }

    /// Three devices, pages of 1, 2 and 3, a fixed pseudo-random script of inserts, updates
    /// and deletes over a small set of ids, each device sending and fetching at its own pace:
    /// after settling, all three hold the same rows.
    @Test(arguments: encryptions)
    func threeDevicesAtTheirOwnPace(_ encryption: SyncEncryption) async throws {
        let cloud = MockCloud()
        var devices: [SyncTestDevice] = []
        for (index, name) in ["phone", "laptop", "tablet"].enumerated() {
            devices.append(try await SyncTestDevice(name, cloud: cloud, fetchPageSize: index + 1, encryption: encryption))
        }
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func random(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for step in 0..<40 {
            let device = devices[random(3)]
            let id = "g\(random(6))"
            switch random(5) {
            case 0: try await device.execute("INSERT OR REPLACE INTO games (id, title, score) VALUES ('\(id)', 'S\(step)', \(step))")
            case 1: try await device.execute("UPDATE games SET title = 'U\(step)' WHERE id = '\(id)'")
            case 2: try await device.execute("DELETE FROM games WHERE id = '\(id)'")
            case 3:
                try await device.execute(
                    "INSERT OR IGNORE INTO games (id, title) VALUES ('\(id)', 'P'); INSERT OR REPLACE INTO players (id, gameID, name) VALUES ('p\(random(4))', '\(id)', 'N\(step)')"
                )
            default: try await device.execute("UPDATE games SET score = \(step) WHERE id = '\(id)'")
            }
            switch random(3) {
            case 0: try await device.engine.sendChanges()
            case 1: try await device.engine.fetchChanges()
            default: try await device.engine.syncChanges()
            }
        }
        try await Self.settle(devices)
        try await Self.expectConverged(devices, "three devices")
    }
}
