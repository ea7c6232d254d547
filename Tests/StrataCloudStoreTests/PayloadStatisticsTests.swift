import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// Migration 13 (`CloudStorePayloadStatistics`): `ANALYZE` leaves the records' fields and
/// versions and a tombstone's versions out, and keeps every other column's statistics, which
/// the store's lookups plan with.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(3)))
struct PayloadStatisticsTests {
    /// Each column's statistics target in the catalog: 0 for the payload columns, the
    /// default (-1) for every other column of the two tables.
    @Test func onlyThePayloadColumnsAreLeftOutOfAnalyze() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        var targets: [String: Int] = [:]
        for try await (table, column, target) in try await fixture.client.query(
            """
            SELECT c.relname::text, a.attname::text, a.attstattarget::int
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'strata_cloud' AND c.relname IN ('records', 'tombstones') AND a.attnum > 0 AND NOT a.attisdropped
            """, logger: fixture.logger
        ).decode((String, String, Int).self) {
            targets["\(table).\(column)"] = target
        }
        let payload = Set(CloudStorePayloadStatistics.columns.map { "\($0.table).\($0.column)" })
        #expect(payload == ["records.fields", "records.field_versions", "tombstones.field_versions"])
        for column in payload { #expect(targets[column] == 0, "\(column)") }
        let others = targets.filter { !payload.contains($0.key) }
        #expect(others.count >= 12, "\(targets)")
        for (column, target) in others { #expect(target == -1, "\(column): \(target)") }
    }

    /// End to end, in a database of its own: after records with fields were saved and some
    /// deleted, `ANALYZE` writes statistics of the names, owners, zones, parents and
    /// positions, and none of the payload columns.
    @Test func analyzeWritesNoStatisticsOfThePayload() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        try await ScratchDatabase.withMigratedStore(fixture: fixture) { store, client in
            let alice = store.privateDatabase(of: "alice")
            let zone = CloudZoneID(name: "games", owner: "alice")
            try await alice.saveZones([zone])
            let version = HybridTimestamp(milliseconds: 1_733_580_000_000, counter: 1, node: "phone")
            let records = (0..<300).map { index in
                CloudRecord(
                    id: CloudRecordID(name: "r\(index)", zone: zone), type: "games",
                    fields: ["title": .text("Game \(index)"), "score": .integer(Int64(index % 7))],
                    fieldVersions: ["title": version, "score": version])
            }
            _ = try await alice.modifyRecords(saving: records, deleting: [])
            _ = try await alice.modifyRecords(saving: [], deleting: records.prefix(100).map(\.id))
            try await client.query("ANALYZE strata_cloud.records, strata_cloud.tombstones", logger: fixture.logger)
            var analyzed: Set<String> = []
            for try await (table, column) in try await client.query(
                "SELECT tablename::text, attname::text FROM pg_stats WHERE schemaname = 'strata_cloud' AND tablename IN ('records', 'tombstones')",
                logger: fixture.logger
            ).decode((String, String).self) {
                analyzed.insert("\(table).\(column)")
            }
            for column in ["records.name", "records.owner", "records.zone", "records.sequence", "tombstones.name"] {
                #expect(analyzed.contains(column), "\(column) not analyzed: \(analyzed.sorted())")
            }
            for (table, column) in CloudStorePayloadStatistics.columns {
                #expect(!analyzed.contains("\(table).\(column)"), "\(table).\(column) analyzed")
            }
        }
    }

    /// Migration 13 applied to a serving database at migration 12 while a writer of a zone is
    /// held before its commit: it ends without waiting for the writer (`SET STATISTICS` takes
    /// a lock that requests' writes do not conflict with), and the writer then commits.
    @Test func migration13DoesNotWaitForAWriter() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let scratch = try await ScratchDatabase(fixture: fixture)
        // A migration that waited for the held writer fails after ten seconds, instead of
        // holding the suite until its time limit.
        try await fixture.client.query(
            PostgresQuery(unsafeSQL: "ALTER DATABASE \(scratch.name) SET lock_timeout = '10s'"), logger: fixture.logger)
        let running = try scratch.client()
        let logger = fixture.logger
        do {
            let client = running.client
            #expect(try await CloudStoreMigrations.run(on: client, logger: logger, through: 12).contains(12))
            let store = CloudStore(client: client, logger: logger)
            let alice = store.privateDatabase(of: "alice")
            let zone = CloudZoneID(name: "games", owner: "alice")
            try await alice.saveZones([zone])
            let hold = StoreFixture.holdNextWriteBeforeCommit(of: store)
            let writer = Task {
                defer { hold.holding.finish() }
                return try await alice.modifyRecords(
                    saving: [CloudRecord(id: CloudRecordID(name: "held", zone: zone), type: "games", fields: ["title": .text("t")])],
                    deleting: [])
            }
            guard await hold.waitUntilHeld() else {
                Issue.record("the write never reached its commit: \(String(describing: await writer.result))")
                running.stop()
                try await scratch.drop()
                return
            }
            // The writer holds its transaction open until released: the migration ends first.
            #expect(try await CloudStoreMigrations.run(on: client, logger: logger) == [13])
            hold.release.yield()
            let written = try await writer.value
            #expect(written.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } }, "\(written)")
        } catch {
            Issue.record("\(String(reflecting: error))")
        }
        running.stop()
        try await scratch.drop()
    }
}
