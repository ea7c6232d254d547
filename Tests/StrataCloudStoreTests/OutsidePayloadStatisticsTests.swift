import Foundation
import Logging
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// An outside tester's attack on migration 13 (`CloudStorePayloadStatistics`, `SET STATISTICS
/// 0` on the records' fields and versions and a tombstone's versions): the store's plans with
/// and without those statistics, the migration on a serving database at migration 12 while it
/// holds its locks, and several service instances migrating at once.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(6)))
struct OutsidePayloadStatisticsTests {
    struct NeverHappened: Error, CustomStringConvertible {
        var description: String
    }

    /// 40 users with 500 records each whose fields are ~600 bytes of sealed-looking text,
    /// 250 tombstones each (half keeping versions), each user sharing `r1` with the next; then
    /// `ANALYZE` of every table. Deterministic, and below `ANALYZE`'s sample of 30,000 rows a
    /// table, so that two databases populated alike get the same statistics.
    static func populate(_ client: PostgresClient, logger: Logger) async throws {
        var statements = CloudStorePolicyPlanTests.seed(prefix: "o", users: 40, perUser: 500)
        statements += [
            """
            UPDATE strata_cloud.records SET
                fields = jsonb_build_object('strata.sealed', jsonb_build_object('text', jsonb_build_object('_0',
                    md5(owner || name) || md5(name || owner) || md5(name) || md5(owner || 'x' || name) || md5(name || 'y')
                    || md5(name || 'z') || md5(owner || 'w' || name) || md5('v' || name) || md5(name || 'u' || owner)
                    || md5('t' || owner || name) || md5(name || 's') || md5('r' || name) || md5(name || 'q' || owner)
                    || md5('p' || name || owner) || md5(owner || name || 'o') || md5(name || 'n' || 'n')))),
                field_versions = jsonb_build_object('title', (1733580000000 + sequence) || '.0@' || owner,
                    'score', (1733580000001 + sequence) || '.0@' || owner)
            """,
            """
            INSERT INTO strata_cloud.tombstones (owner, zone, name, type, sequence, audience, field_versions)
            SELECT 'o' || u, 'z', 'd' || i, 'games', 1000 + i, ARRAY[]::text[],
                CASE WHEN i % 2 = 0 THEN jsonb_build_object('title', (1733580000000 + i) || '.0@o' || u) END
            FROM generate_series(1, 40) u, generate_series(1, 250) i
            """,
            "UPDATE strata_cloud.zones SET sequence = 1250",
        ]
        for table in ["users", "zones", "records", "tombstones", "departures", "shares", "share_participants"] {
            statements.append("ALTER TABLE strata_cloud.\(table) SET (autovacuum_enabled = off)")
        }
        statements.append(
            "ANALYZE strata_cloud.users, strata_cloud.zones, strata_cloud.records, strata_cloud.tombstones, strata_cloud.departures, "
                + "strata_cloud.shares, strata_cloud.share_participants")
        for sql in statements { try await client.query(PostgresQuery(unsafeSQL: sql), logger: logger) }
    }

    /// The store's statements that read or write records and tombstones, planned with values
    /// (custom) and without (generic), as the request role: label → `EXPLAIN (COSTS OFF)`.
    static func plans(of store: CloudStore) async throws -> [String: String] {
        let (owner, participant) = ("o1", "o2")
        let names = "ARRAY['r1', 'r5', 'r500', 'd2', 'd3']::text[]"
        let statements: [(label: String, user: String, sql: String, arguments: String)] = [
            ("lock the zone", owner, PreparedStatements.LockZone.sql, "'\(owner)', 'z'"),
            ("the zone's shape", owner, PreparedStatements.ZoneShapeRows.sql, "'\(owner)', 'z', \(names), \(names), \(names)"),
            (
                "write records", owner, PreparedStatements.WriteRecords.sql,
                """
                '\(owner)', 'z', ARRAY['r1'], ARRAY['games'], ARRAY['{}'], ARRAY['{}'], ARRAY[''], ARRAY[false], ARRAY['t9'],
                ARRAY[5000]::bigint[], ARRAY[40]::bigint[], ARRAY['r1'], ARRAY[true], 5000
                """
            ),
            ("finish a change", owner, PreparedStatements.FinishChange.sql, "'\(owner)', 'z', 40, NULL, ARRAY[]::text[]"),
            ("the private database's changes", owner, PreparedStatements.PrivateDatabaseChanges.sql, "'\(owner)', 0"),
            ("the owner's first page", owner, PreparedStatements.OwnZonePage.sql, "'\(owner)', 'z', 0, 0, 401"),
            ("the owner's later page", owner, PreparedStatements.OwnZonePage.sql, "'\(owner)', 'z', 300, 1100, 401"),
            ("a participant's zone page", participant, PreparedStatements.SharedZonePage.sql, "'\(owner)', 'z', 0, 0, 401"),
        ]
        var plans: [String: String] = [:]
        for (index, statement) in statements.enumerated() {
            for generic in [false, true] {
                plans["\(statement.label)\(generic ? " (generic)" : "")"] = try await store.transaction(as: statement.user) { connection in
                    let logger = store.logger
                    if generic { try await connection.query("SET LOCAL plan_cache_mode = force_generic_plan", logger: logger) }
                    if PreparedStatementPlanTests.zonePages.contains(statement.sql) {
                        try await connection.perform(
                            PostgresQuery(unsafeSQL: "SELECT " + PreparedStatements.readPagesInFeedOrder), logger: logger)
                    }
                    try await connection.query(
                        PostgresQuery(unsafeSQL: "PREPARE outside_plan_\(index) AS \(statement.sql)"), logger: logger)
                    var lines: [String] = []
                    for try await line in try await connection.query(
                        PostgresQuery(unsafeSQL: "EXPLAIN (COSTS OFF) EXECUTE outside_plan_\(index)(\(statement.arguments))"),
                        logger: logger
                    ).decode(String.self) {
                        lines.append(line)
                    }
                    try await connection.query(PostgresQuery(unsafeSQL: "DEALLOCATE outside_plan_\(index)"), logger: logger)
                    return lines.joined(separator: "\n")
                }
            }
        }
        return plans
    }

    /// Which of the payload columns `pg_stats` holds statistics of.
    static func payloadColumnsWithStatistics(_ client: PostgresClient, logger: Logger) async throws -> Set<String> {
        var found: Set<String> = []
        for try await (table, column) in try await client.query(
            "SELECT tablename::text, attname::text FROM pg_stats WHERE schemaname = 'strata_cloud' AND tablename IN ('records', 'tombstones')",
            logger: logger
        ).decode((String, String).self) {
            found.insert("\(table).\(column)")
        }
        return found.intersection(CloudStorePayloadStatistics.columns.map { "\($0.table).\($0.column)" })
    }

    static func rowCounts(_ client: PostgresClient, logger: Logger) async throws -> [Int64] {
        var counts: [Int64] = []
        for try await row in try await client.query(
            """
            SELECT (SELECT count(*) FROM strata_cloud.records), (SELECT count(*) FROM strata_cloud.tombstones),
                (SELECT count(*) FROM strata_cloud.tombstones WHERE field_versions IS NOT NULL),
                (SELECT count(*) FROM strata_cloud.zones), (SELECT count(*) FROM strata_cloud.share_participants)
            """, logger: logger
        ).decode((Int64, Int64, Int64, Int64, Int64).self) {
            counts = [row.0, row.1, row.2, row.3, row.4]
        }
        return counts
    }

    /// The same data in a database at migration 12 (its payload analyzed) and in one migrated
    /// to 13 first: every statement of the store that touches records or tombstones is planned
    /// alike, with values and without. Migration 13 then applied to the first keeps every row
    /// and every plan.
    @Test func theStoresPlansAreTheSameWithAndWithoutPayloadStatistics() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let logger = fixture.logger
        let (at12, at13) = (try await ScratchDatabase(fixture: fixture), try await ScratchDatabase(fixture: fixture))
        let (running12, running13) = (try at12.client(), try at13.client())
        do {
            #expect(try await CloudStoreMigrations.run(on: running12.client, logger: logger, through: 12) == Array(1...12))
            #expect(try await CloudStoreMigrations.run(on: running13.client, logger: logger).contains(13))
            try await Self.populate(running12.client, logger: logger)
            try await Self.populate(running13.client, logger: logger)
            #expect(try await Self.payloadColumnsWithStatistics(running12.client, logger: logger).count == 3)
            #expect(try await Self.payloadColumnsWithStatistics(running13.client, logger: logger).isEmpty)
            let store12 = CloudStore(client: running12.client, logger: logger)
            let store13 = CloudStore(client: running13.client, logger: logger)
            let with = try await Self.plans(of: store12)
            let without = try await Self.plans(of: store13)
            #expect(with.count == 16)
            for (label, plan) in with.sorted(by: { $0.key < $1.key }) {
                #expect(without[label] == plan, "\(label): with payload statistics\n\(plan)\nwithout\n\(without[label] ?? "-")")
            }

            let before = try await Self.rowCounts(running12.client, logger: logger)
            #expect(try await CloudStoreMigrations.run(on: running12.client, logger: logger) == [13])
            #expect(try await Self.rowCounts(running12.client, logger: logger) == before)
            try await running12.client.query("ANALYZE strata_cloud.records, strata_cloud.tombstones", logger: logger)
            let after = try await Self.plans(of: store12)
            for (label, plan) in with.sorted(by: { $0.key < $1.key }) {
                #expect(after[label] == plan, "\(label): before migration 13\n\(plan)\nafter\n\(after[label] ?? "-")")
            }
            // The owner still reads every record of a zone through the migrated database.
            var token: CloudChangeToken?
            var read = 0
            while true {
                let page = try await store12.privateDatabase(of: "o3").fetchZoneChanges(
                    CloudZoneID(name: "z", owner: "o3"), since: token, limit: 400)
                read += page.changed.count
                token = page.token
                if !page.moreComing { break }
            }
            #expect(read == 500)
        } catch {
            Issue.record("\(String(reflecting: error))")
        }
        running12.stop()
        running13.stop()
        try await at12.drop()
        try await at13.drop()
    }

    /// What `pg_stats` holds of the payload after migration 13 on a database whose payload was
    /// analyzed at migration 12, and a later `ANALYZE`: what was gathered before stays, as
    /// the migration documents (it first claimed PostgreSQL kept none).
    @Test func statisticsGatheredBeforeMigration13StayAsTheyWere() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        try await ScratchDatabase.withMigratedStore(fixture: fixture, through: 12) { store, client in
            let logger = fixture.logger
            try await Self.populate(client, logger: logger)
            #expect(try await Self.payloadColumnsWithStatistics(client, logger: logger).count == 3)
            #expect(try await CloudStoreMigrations.run(on: client, logger: logger) == [13])
            try await client.query("ANALYZE strata_cloud.records, strata_cloud.tombstones", logger: logger)
            // `ANALYZE` skips the columns without deleting what it wrote before (only a
            // superuser could): they stay as they were, which the store documents, and no plan
            // reads them (`theStoresPlansAreTheSameWithAndWithoutPayloadStatistics`).
            let kept = try await Self.payloadColumnsWithStatistics(client, logger: logger)
            #expect(kept.count == 3, "\(kept.sorted())")
        }
    }

    /// Migration 13 holding its locks (its transaction kept open: another session inserted
    /// version 13 uncommitted, so its own insert waits), on a serving database at migration
    /// 12: every kind of request goes through meanwhile — saves, deletions, pages of the
    /// owner and of a participant, a participant's write, zones made and deleted, a share
    /// saved. Then the migration ends once the other session rolls back.
    @Test func requestsGoThroughWhileMigration13HoldsItsLocks() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let logger = fixture.logger
        let scratch = try await ScratchDatabase(fixture: fixture)
        // A request that waited for the migration fails after 15 seconds, instead of hanging.
        try await fixture.client.query(
            PostgresQuery(unsafeSQL: "ALTER DATABASE \(scratch.name) SET lock_timeout = '15s'"), logger: logger)
        let running = try scratch.client()
        let (inserted, insertedSignal) = AsyncStream<Void>.makeStream()
        let (released, release) = AsyncStream<Void>.makeStream()
        var blocker: Task<Void, any Error>?
        var migration: Task<[Int], any Error>?
        do {
            let client = running.client
            #expect(try await CloudStoreMigrations.run(on: client, logger: logger, through: 12) == Array(1...12))
            let store = CloudStore(client: client, logger: logger)
            let alice = store.privateDatabase(of: "alice")
            let (games, notes) = (CloudZoneID(name: "games", owner: "alice"), CloudZoneID(name: "notes", owner: "alice"))
            try await alice.saveZones([games, notes])
            let root = CloudRecordID(name: "root", zone: games)
            let version = HybridTimestamp(milliseconds: 1_733_580_000_000, counter: 1, node: "phone")
            func record(_ name: String, in zone: CloudZoneID = games) -> CloudRecord {
                CloudRecord(
                    id: CloudRecordID(name: name, zone: zone), type: "games", fields: ["title": .text(name)],
                    fieldVersions: ["title": version], parent: zone == games && name != "root" ? root : nil)
            }
            _ = try await alice.modifyRecords(saving: [record("root")] + (0..<50).map { record("c\($0)") }, deleting: [])
            _ = try await alice.modifyRecords(saving: [], deleting: (0..<10).map { CloudRecordID(name: "c\($0)", zone: games) })
            var share = CloudShare(rootRecordID: root, title: "games")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            share = try await alice.saveShare(share)
            _ = try await store.container(for: "bob").acceptShare(url: share.url)

            blocker = Task {
                try await client.withConnection { connection in
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.query("INSERT INTO strata_cloud.migrations (version) VALUES (13)", logger: logger)
                    insertedSignal.yield()
                    for await _ in released { break }
                    try await connection.query("ROLLBACK", logger: logger)
                }
            }
            for await _ in inserted { break }
            migration = Task { try await CloudStoreMigrations.run(on: client, logger: logger) }
            guard try await Self.waitUntilMigrationHoldsItsLocks(client, logger: logger) else {
                throw NeverHappened(description: "migration 13 never held its locks while waiting")
            }

            let start = ContinuousClock.now
            var written = try await alice.modifyRecords(
                saving: (50..<80).map { record("c\($0)") } + [record("n1", in: notes)],
                deleting: (10..<20).map { CloudRecordID(name: "c\($0)", zone: games) })
            #expect(written.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } }, "\(written)")
            var token: CloudChangeToken?
            var seen = 0
            while true {
                let page = try await alice.fetchZoneChanges(games, since: token, limit: 25)
                seen += page.changed.count
                token = page.token
                if !page.moreComing { break }
            }
            #expect(seen == 61)
            _ = try await alice.fetchDatabaseChanges(since: nil)
            let bob = store.sharedDatabase(of: "bob")
            let bobs = try await bob.fetchZoneChanges(games, since: nil, limit: 400)
            #expect(bobs.changed.count == 61)
            written = try await bob.modifyRecords(saving: [record("bob1")], deleting: [])
            #expect(written.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } }, "\(written)")
            let extra = CloudZoneID(name: "extra", owner: "alice")
            try await alice.saveZones([extra])
            _ = try await alice.modifyRecords(saving: [record("e1", in: extra)], deleting: [])
            try await alice.deleteZones([extra, notes])
            share = try await alice.fetchShare(rootRecordID: root)
            share.participants.append(CloudShare.Participant(user: "carol", permission: .readOnly))
            _ = try await alice.saveShare(share)
            let elapsed = ContinuousClock.now - start
            #expect(elapsed < .seconds(10), "the requests took \(elapsed) while the migration held its locks")
            #expect(try await Self.migrationHoldsItsLocks(client, logger: logger), "the migration no longer held its locks")

            release.yield()
            _ = try await blocker?.value
            #expect(try await migration?.value == [13])
        } catch {
            Issue.record("\(String(reflecting: error))")
        }
        release.yield()
        release.finish()
        _ = await blocker?.result
        _ = await migration?.result
        running.stop()
        try await scratch.drop()
    }

    /// Whether a session of this database holds `SHARE UPDATE EXCLUSIVE` on both records and
    /// tombstones while it waits for a lock: the migration, between its statements and its
    /// version's insert.
    static func migrationHoldsItsLocks(_ client: PostgresClient, logger: Logger) async throws -> Bool {
        for try await count in try await client.query(
            """
            SELECT count(DISTINCT c.relname) FROM pg_locks l
            JOIN pg_class c ON c.oid = l.relation
            JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE c.relname IN ('records', 'tombstones') AND l.mode = 'ShareUpdateExclusiveLock' AND l.granted
                AND a.datname = current_database() AND a.wait_event_type = 'Lock'
            """, logger: logger
        ).decode(Int64.self) {
            return count == 2
        }
        return false
    }

    static func waitUntilMigrationHoldsItsLocks(_ client: PostgresClient, logger: Logger) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(20))
        while ContinuousClock.now < deadline {
            if try await migrationHoldsItsLocks(client, logger: logger) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return false
    }

    /// Four service instances (a client each) migrate a serving database at migration 12 at
    /// once, and four others a new database: each migration is applied once, by one of them,
    /// and none fails.
    @Test(arguments: [12, 0])
    func severalInstancesMigratingAtOnceMigrateOnce(from version: Int) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let logger = fixture.logger
        let scratch = try await ScratchDatabase(fixture: fixture)
        var instances: [ScratchDatabase.RunningClient] = []
        do {
            let setup = try scratch.client()
            instances.append(setup)
            if version > 0 {
                #expect(try await CloudStoreMigrations.run(on: setup.client, logger: logger, through: version) == Array(1...version))
                try await Self.populate(setup.client, logger: logger)
            }
            for _ in 0..<4 { instances.append(try scratch.client()) }
            let clients = instances.dropFirst().map(\.client)
            let results = try await withThrowingTaskGroup(of: [Int].self) { group in
                for client in clients { group.addTask { try await CloudStoreMigrations.run(on: client, logger: logger) } }
                var results: [[Int]] = []
                for try await result in group { results.append(result) }
                return results
            }
            let expected = Array((version + 1)...CloudStoreMigrations.all.count)
            #expect(results.filter { !$0.isEmpty } == [expected], "\(results)")
            #expect(results.filter(\.isEmpty).count == 3, "\(results)")
            var versions: [Int] = []
            for try await applied in try await setup.client.query(
                "SELECT version FROM strata_cloud.migrations ORDER BY version", logger: logger
            )
            .decode(Int.self) {
                versions.append(applied)
            }
            #expect(versions == Array(1...CloudStoreMigrations.all.count))
            var targets: [Int] = []
            for try await target in try await setup.client.query(
                """
                SELECT a.attstattarget::int FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                WHERE c.relnamespace = 'strata_cloud'::regnamespace AND (c.relname, a.attname) IN
                    (('records', 'fields'), ('records', 'field_versions'), ('tombstones', 'field_versions'))
                """, logger: logger
            ).decode(Int.self) {
                targets.append(target)
            }
            #expect(targets == [0, 0, 0])
        } catch {
            Issue.record("\(String(reflecting: error))")
        }
        for instance in instances { instance.stop() }
        try await scratch.drop()
    }
}
