import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// Migration 12 (`CloudStoreZoneRowsByLock`): records, tombstones and departures carry no
/// foreign key to their zone, checked on every row written; the zone's row lock keeps them in
/// zones that exist, and triggers on `zones` keep what the keys' actions did when a zone's
/// row is deleted or renamed by hand.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(3)))
struct ZoneRowsByLockTests {
    /// No foreign key from the three tables to `zones`, and none of PostgreSQL's internal
    /// triggers that would check one on each inserted row.
    @Test func noRowWrittenToAZoneTableRunsAForeignKeyCheck() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        for table in CloudStoreZoneRowsByLock.tables {
            let qualified = "strata_cloud.\(table)"
            var keys: [String] = []
            for try await name in try await fixture.client.query(
                """
                SELECT conname::text FROM pg_constraint
                WHERE contype = 'f' AND conrelid = \(qualified)::regclass AND confrelid = 'strata_cloud.zones'::regclass
                """
            ).decode(String.self) {
                keys.append(name)
            }
            #expect(keys.isEmpty, "\(table): \(keys)")
            var internalTriggers: [String] = []
            for try await name in try await fixture.client.query(
                "SELECT tgname::text FROM pg_trigger WHERE tgrelid = \(qualified)::regclass AND tgisinternal"
            ).decode(String.self) {
                internalTriggers.append(name)
            }
            #expect(internalTriggers.isEmpty, "\(table): \(internalTriggers)")
        }
    }

    /// The migration takes `zones` before the tables it alters, as requests take them, and
    /// locks every table it alters in that first statement.
    @Test func theMigrationLocksTheZonesFirst() throws {
        let first = try #require(CloudStoreZoneRowsByLock.statements.first)
        #expect(first.hasPrefix("LOCK TABLE strata_cloud.zones, "), "\(first)")
        for table in CloudStoreZoneRowsByLock.tables { #expect(first.contains("strata_cloud.\(table)"), "\(table)") }
        for statement in CloudStoreZoneRowsByLock.statements where statement.hasPrefix("ALTER TABLE") {
            let table = statement.dropFirst("ALTER TABLE strata_cloud.".count).prefix { $0 != " " }
            #expect(CloudStoreZoneRowsByLock.tables.contains(String(table)), "\(statement)")
        }
    }

    /// A zone's row deleted by hand takes its departures along, as its records and tombstones
    /// (`ZoneDeletionIntegrityTests`), and leaves another zone's alone.
    @Test func aZoneRowDeletedByHandTakesItsDepartures() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let (games, notes) = (fixture.zone("games", of: "alice"), fixture.zone("notes", of: "alice"))
        try await alice.saveZones([games, notes])
        for zone in [games, notes] { try await Self.addDeparture(named: "gone", in: zone, fixture: fixture) }
        try await fixture.client.query(
            "DELETE FROM strata_cloud.zones WHERE owner = \(games.owner) AND name = \(games.name)", logger: fixture.logger)
        #expect(try await Self.departures(in: games, fixture: fixture) == 0)
        #expect(try await Self.departures(in: notes, fixture: fixture) == 1)
    }

    /// Truncating `zones` by hand (`CASCADE`, which the shares' key asks for) empties the
    /// three tables too, as the keys' cascade did: a trigger on a row's deletion does not fire
    /// on `TRUNCATE`. In a database of its own, since it empties every user's zones.
    @Test func truncatingTheZonesTruncatesTheirRows() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        try await ScratchDatabase.withMigratedStore(fixture: fixture) { store, client in
            let alice = store.privateDatabase(of: "alice")
            let zone = CloudZoneID(name: "games", owner: "alice")
            try await alice.saveZones([zone])
            let records = (1...3).map { CloudRecord(id: CloudRecordID(name: "r\($0)", zone: zone), type: "games") }
            _ = try await alice.modifyRecords(saving: records, deleting: [])
            _ = try await alice.modifyRecords(saving: [], deleting: [records[0].id])
            try await client.query(
                "INSERT INTO strata_cloud.departures (owner, zone, name, type, sequence, audience) VALUES ('alice', 'games', 'gone', 'games', 1, ARRAY['bob'])",
                logger: fixture.logger)
            try await client.query("TRUNCATE strata_cloud.zones CASCADE", logger: fixture.logger)
            var left: [Int64] = []
            for try await counts in try await client.query(
                """
                SELECT (SELECT count(*) FROM strata_cloud.records), (SELECT count(*) FROM strata_cloud.tombstones),
                       (SELECT count(*) FROM strata_cloud.departures)
                """
            ).decode((Int64, Int64, Int64).self) {
                left = [counts.0, counts.1, counts.2]
            }
            #expect(left == [0, 0, 0])
        }
    }

    /// Changing a zone's owner or name by hand is refused while a record, a tombstone or a
    /// departure refers to it (`foreign_key_violation`, as the keys' `NO ACTION`), and allowed
    /// when none does; an update that keeps the key, as every request's, is never refused.
    @Test(arguments: ["record", "tombstone", "departure", "nothing"])
    func aZonesKeyChangesOnlyWhileNoRowRefersToIt(held: String) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let record = CloudRecord(id: CloudRecordID(name: "r1", zone: zone), type: "games")
        switch held {
        case "record":
            _ = try await alice.modifyRecords(saving: [record], deleting: [])
        case "tombstone":
            _ = try await alice.modifyRecords(saving: [record], deleting: [])
            _ = try await alice.modifyRecords(saving: [], deleting: [record.id])
        case "departure":
            try await Self.addDeparture(named: "gone", in: zone, fixture: fixture)
        default:
            break
        }
        try await fixture.client.query(
            "UPDATE strata_cloud.zones SET sequence = sequence + 1 WHERE owner = \(zone.owner) AND name = \(zone.name)",
            logger: fixture.logger)
        // Bob exists as a user (a zone's owner must: `zones.owner` keeps its key to `users`).
        let bob = fixture.user("bob")
        try await fixture.database("bob").saveZones([fixture.zone("other", of: "bob")])
        for renaming in ["name = name || '-renamed'", "owner = '\(bob)'"] {
            let refused: Bool
            do {
                try await fixture.client.query(
                    PostgresQuery(
                        unsafeSQL: "UPDATE strata_cloud.zones SET \(renaming) WHERE owner = $1 AND name = $2",
                        binds: Self.binds(zone.owner, zone.name)),
                    logger: fixture.logger)
                refused = false
            } catch let error as PSQLError {
                #expect(error.serverInfo?[.sqlState] == "23503", "\(String(reflecting: error))")
                refused = true
            }
            if !refused {
                // Back, for the next renaming.
                try await fixture.client.query(
                    PostgresQuery(
                        unsafeSQL: """
                            UPDATE strata_cloud.zones SET owner = $1, name = $2
                            WHERE (owner, name) IN (($3, $2), ($1, $2 || '-renamed'))
                            """,
                        binds: Self.binds(zone.owner, zone.name, bob)),
                    logger: fixture.logger)
            }
            #expect(refused == (held != "nothing"), "\(held), \(renaming)")
        }
    }

    /// Many writers, deleters and re-creators of the same zones at once, in a seeded random
    /// mix, then no record, tombstone or departure is left in a zone whose row is gone or
    /// marked deleted: the zone's lock is what keeps them out now.
    @Test(arguments: [1, 2, 3])
    func concurrentWritesAndZoneDeletionsLeaveNoRowOutsideALiveZone(seed: UInt64) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zones = ["a", "b", "c"].map { fixture.zone($0, of: "alice") }
        try await alice.saveZones(zones)
        var generator = SplitMix(seed: seed)
        var plans: [[Int]] = []
        for _ in 0..<6 { plans.append((0..<25).map { _ in Int.random(in: 0..<100, using: &generator) }) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (worker, plan) in plans.enumerated() {
                group.addTask {
                    for (step, roll) in plan.enumerated() {
                        let zone = zones[(roll + worker) % zones.count]
                        let names = (0..<(1 + roll % 7)).map { CloudRecordID(name: "r\(($0 + step * 3) % 12)", zone: zone) }
                        switch roll {
                        case 0..<55:
                            _ = try await alice.modifyRecords(
                                saving: names.map { CloudRecord(id: $0, type: "games", fields: ["n": .integer(Int64(roll))]) },
                                deleting: [])
                        case 55..<80:
                            _ = try await alice.modifyRecords(saving: [], deleting: names)
                        case 80..<90:
                            try await alice.deleteZones([zone])
                        default:
                            try await alice.saveZones([zone])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        var outside: [String] = []
        for try await line in try await fixture.client.query(
            PostgresQuery(
                unsafeSQL: CloudStoreZoneRowsByLock.tables.map { table in
                    """
                    SELECT '\(table) ' || t.zone || '/' || t.name FROM strata_cloud.\(table) t WHERE t.owner = $1 AND NOT EXISTS (
                        SELECT 1 FROM strata_cloud.zones z WHERE z.owner = t.owner AND z.name = t.zone AND NOT z.deleted)
                    """
                }.joined(separator: " UNION ALL "),
                binds: Self.binds(fixture.user("alice")))
        ).decode(String.self) {
            outside.append(line)
        }
        #expect(outside.isEmpty, "\(outside)")
    }

    /// A departure of `name` from `zone`, written by hand (the connecting role).
    static func addDeparture(named name: String, in zone: CloudZoneID, fixture: StoreFixture) async throws {
        try await fixture.client.query(
            """
            INSERT INTO strata_cloud.departures (owner, zone, name, type, sequence, audience)
            VALUES (\(zone.owner), \(zone.name), \(name), 'games', 1, ARRAY['someone'])
            """,
            logger: fixture.logger)
    }

    static func departures(in zone: CloudZoneID, fixture: StoreFixture) async throws -> Int64 {
        var count: Int64 = -1
        for try await found in try await fixture.client.query(
            "SELECT count(*) FROM strata_cloud.departures WHERE owner = \(zone.owner) AND zone = \(zone.name)"
        ).decode(Int64.self) {
            count = found
        }
        return count
    }

    static func binds(_ texts: String...) -> PostgresBindings {
        var bindings = PostgresBindings()
        for text in texts { bindings.append(text) }
        return bindings
    }
}
