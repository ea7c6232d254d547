import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// Records and tombstones belong to a zone that exists and is not deleted, which the zone's
/// row lock holds: every write takes it first, and so does a deletion, which therefore waits
/// for a write that holds it and removes what the write wrote; a write after a deletion is
/// refused and writes nothing; a zone row deleted by hand takes its rows along.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct ZoneDeletionIntegrityTests {
    @Test func aZoneRowDeletedByHandTakesItsRecordsAndTombstonesAndNoOtherZones() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let (games, notes) = (fixture.zone("games", of: "alice"), fixture.zone("notes", of: "alice"))
        try await alice.saveZones([games, notes])
        for zone in [games, notes] {
            let records = (1...3).map { CloudRecord(id: CloudRecordID(name: "r\($0)", zone: zone), type: "games") }
            _ = try await alice.modifyRecords(saving: records, deleting: [])
            _ = try await alice.modifyRecords(saving: [], deleting: [records[0].id])
        }
        #expect(try await Self.rows(of: games, in: fixture) == Rows(records: 2, tombstones: 1))
        try await fixture.client.query(
            "DELETE FROM strata_cloud.zones WHERE owner = \(games.owner) AND name = \(games.name)", logger: fixture.logger)
        #expect(try await Self.rows(of: games, in: fixture) == Rows(records: 0, tombstones: 0))
        #expect(try await Self.rows(of: notes, in: fixture) == Rows(records: 2, tombstones: 1))
    }

    /// A deletion asked for while a write holds the zone's lock waits for it, then removes what
    /// it wrote and frees what it used: no row of the zone is left, and the owner's stored bytes
    /// come back to zero. With `balanced`, the write deletes a record as large as the one it
    /// adds and changes no stored bytes.
    @Test(arguments: [false, true])
    func aZoneDeletedWhileAWriteHoldsItsLockEndsWithoutTheWritesRows(balanced: Bool) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let old = CloudRecord(id: CloudRecordID(name: "old", zone: zone), type: "games")
        _ = try await alice.modifyRecords(saving: [old], deleting: [])

        let hold = fixture.holdNextWriteBeforeCommit()
        let saves =
            balanced
            ? [CloudRecord(id: CloudRecordID(name: "new", zone: zone), type: "games")]
            : (1...50).map {
                CloudRecord(id: CloudRecordID(name: "new\($0)", zone: zone), type: "games", fields: ["n": .integer(Int64($0))])
            }
        let writer = Task {
            defer { hold.holding.finish() }
            return try await alice.modifyRecords(saving: saves, deleting: [old.id])
        }
        guard await hold.waitUntilHeld() else {
            Issue.record("the write never reached its commit: \(String(describing: await writer.result))")
            return
        }
        let deleter = Task { try await alice.deleteZones([zone]) }
        try await fixture.waitUntilSomeoneWaitsForALock()
        hold.release.yield()
        let written = try await writer.value
        #expect(written.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } })
        try await deleter.value
        #expect(try await Self.rows(of: zone, in: fixture) == Rows(records: 0, tombstones: 0))
        var used: Int64 = -1
        for try await bytes in try await fixture.client.query(
            "SELECT used_bytes FROM strata_cloud.users WHERE name = \(zone.owner)"
        ).decode(Int64.self) {
            used = bytes
        }
        #expect(used == 0)
        // A zone made again under the same name starts empty.
        try await alice.saveZones([zone])
        let changes = try await alice.fetchZoneChanges(zone, since: nil, limit: 100)
        #expect(changes.changed.isEmpty, "\(changes.changed.map(\.id.name))")
    }

    /// After a deletion, and in a zone that never existed, saves and deletes are refused and
    /// write nothing.
    @Test(arguments: [true, false])
    func writesToAZoneThatIsNotThereAreRefusedAndWriteNothing(existedOnce: Bool) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        let record = CloudRecord(id: CloudRecordID(name: "r1", zone: zone), type: "games")
        if existedOnce {
            try await alice.saveZones([zone])
            _ = try await alice.modifyRecords(saving: [record], deleting: [])
            try await alice.deleteZones([zone])
        }
        let other = CloudRecordID(name: "r2", zone: zone)
        let result = try await alice.modifyRecords(saving: [record], deleting: [other])
        #expect(result.saveResults[record.id].map { if case .failure(.zoneNotFound) = $0 { true } else { false } } == true)
        #expect(result.deleteResults[other].map { if case .failure(.zoneNotFound) = $0 { true } else { false } } == true)
        #expect(try await Self.rows(of: zone, in: fixture) == Rows(records: 0, tombstones: 0))
    }

    struct Rows: Equatable {
        var records: Int64
        var tombstones: Int64
    }

    /// The zone's rows, counted as the connecting role (no row-level security).
    static func rows(of zone: CloudZoneID, in fixture: StoreFixture) async throws -> Rows {
        var rows = Rows(records: -1, tombstones: -1)
        for try await (records, tombstones) in try await fixture.client.query(
            """
            SELECT (SELECT count(*) FROM strata_cloud.records WHERE owner = \(zone.owner) AND zone = \(zone.name)),
                   (SELECT count(*) FROM strata_cloud.tombstones WHERE owner = \(zone.owner) AND zone = \(zone.name))
            """
        ).decode((Int64, Int64).self) {
            rows = Rows(records: records, tombstones: tombstones)
        }
        return rows
    }
}
