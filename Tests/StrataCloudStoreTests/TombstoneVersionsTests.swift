import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// A tombstone keeps the field versions of the record it removed (migration 10), whoever
/// deleted it, and tombstones written before that compare with nothing.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct TombstoneVersionsTests {
    static let versions = ["title": HybridTimestamp(milliseconds: 10, counter: 2, node: "phone")]

    func storedVersions(_ fixture: StoreFixture, zone: CloudZoneID, name: String) async throws -> String? {
        var found: String?
        for try await text in try await fixture.client.query(
            """
            SELECT field_versions::text FROM strata_cloud.tombstones
            WHERE owner = \(zone.owner) AND zone = \(zone.name) AND name = \(name)
            """,
            logger: fixture.logger
        ).decode(String?.self) {
            found = text
        }
        return found
    }

    @Test func aDeleteKeepsTheRecordsVersionsAndAnOldTombstoneComparesWithNothing() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let record = CloudRecord(
            id: CloudRecordID(name: "r", zone: zone), type: "games", fields: ["title": .text("t")], fieldVersions: Self.versions)
        _ = try await alice.modifyRecords(saving: [record], deleting: [])
        _ = try await alice.modifyRecords(saving: [], deleting: [record.id])
        let kept = try #require(try await storedVersions(fixture, zone: zone, name: "r"))
        #expect(try RecordCoding.decodeVersions(kept) == Self.versions)
        #expect(
            try await alice.modifyRecords(saving: [record], deleting: []).saveResults[record.id] == .failure(.supersededByDelete(record.id))
        )

        // As a tombstone written before migration 10 is.
        try await fixture.client.query(
            "UPDATE strata_cloud.tombstones SET field_versions = NULL WHERE owner = \(zone.owner) AND zone = \(zone.name)",
            logger: fixture.logger)
        guard case .success? = try await alice.modifyRecords(saving: [record], deleting: []).saveResults[record.id] else {
            Issue.record("a save over a tombstone without versions was refused")
            return
        }
    }

    /// A participant's delete, under row-level security, keeps the versions too: the owner's
    /// save of the same versions, sent again, is refused.
    @Test func aParticipantsDeleteKeepsTheVersions() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let bob = fixture.user("bob")
        let share = try await fixture.aliceSharesARoot(with: bob)
        _ = try await fixture.store.container(for: bob).acceptShare(url: share.url)
        let zone = fixture.zone("games", of: "alice")
        let child = CloudRecord(
            id: CloudRecordID(name: "child", zone: zone), type: "players", fields: ["name": .text("Ann")], fieldVersions: Self.versions,
            parent: CloudRecordID(name: "root", zone: zone))
        let alice = fixture.database("alice")
        guard case .success? = try await alice.modifyRecords(saving: [child], deleting: []).saveResults[child.id] else {
            Issue.record("alice could not save the child")
            return
        }
        let deleted = try await fixture.store.sharedDatabase(of: bob).modifyRecords(saving: [], deleting: [child.id])
        guard case .success? = deleted.deleteResults[child.id] else {
            Issue.record("bob could not delete the child: \(String(describing: deleted.deleteResults[child.id]))")
            return
        }
        #expect(try await storedVersions(fixture, zone: zone, name: "child") != nil)
        #expect(
            try await alice.modifyRecords(saving: [child], deleting: []).saveResults[child.id] == .failure(.supersededByDelete(child.id)))
    }
}
