import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// The store prepares the statements of every push and sync (``PreparedStatements``), and
/// after five executions PostgreSQL may keep a generic plan: one made without the values. A
/// generic plan must stay on the indexes as the custom ones do, or every request after the
/// fifth on a pooled connection would scan. Each statement is planned generically
/// (`plan_cache_mode = force_generic_plan`) as the request role, over 100 users with 1,000
/// records each, and must not scan records, tombstones or departures.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct PreparedStatementPlanTests {
    @Test func genericPlansOfPreparedStatementsStayOnIndexes() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let prefix = fixture.user("g")
        try await fixture.client.withTransaction(logger: fixture.store.logger) { connection in
            for sql in CloudStorePolicyPlanTests.seed(prefix: prefix, users: 100, perUser: 1_000) {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: fixture.store.logger)
            }
            // Deletions too: over an empty table, a scan is the right plan.
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO strata_cloud.tombstones (owner, zone, name, type, sequence, audience, field_versions)
                        SELECT '\(prefix)' || u, 'z', 'd' || i, 'games', 1000 + i, ARRAY[]::text[], '{}'::jsonb
                        FROM generate_series(1, 100) u, generate_series(1, 1000) i
                        """), logger: fixture.store.logger)
        }
        for table in ["records", "tombstones", "zones", "share_participants"] {
            try await fixture.client.query(PostgresQuery(unsafeSQL: "ANALYZE strata_cloud.\(table)"))
        }
        // pg2 accepted pg1's share of r1.
        let (owner, participant) = ("\(prefix)1", "\(prefix)2")
        let names = "ARRAY['r1', 'r5', 'r500']::text[]"
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
            ("move the zone's position", owner, PreparedStatements.MoveZonePosition.sql, "'\(owner)', 'z', 5000"),
            ("finish a change", owner, PreparedStatements.FinishChange.sql, "'\(owner)', 'z', 40, NULL, ARRAY[]::text[]"),
            ("the private database's changes", owner, PreparedStatements.PrivateDatabaseChanges.sql, "'\(owner)', 0"),
            ("the zone's state", participant, PreparedStatements.ZoneState.sql, "'\(owner)', 'z'"),
            ("the owner's zone page", owner, PreparedStatements.OwnZonePage.sql, "'\(owner)', 'z', 800, 800, 201"),
            ("a participant's zone page", participant, PreparedStatements.SharedZonePage.sql, "'\(owner)', 'z', 0, 0, 201"),
            ("the planned starts of later pages", owner, PreparedStatements.PlannedPageStarts.sql, "'\(owner)', 'z', 800, 401, 200"),
        ]
        var indexChecked: [String] = []
        for (index, statement) in statements.enumerated() {
            let plan = try await fixture.store.transaction(as: statement.user) { connection in
                let logger = fixture.store.logger
                try await connection.query("SET LOCAL plan_cache_mode = force_generic_plan", logger: logger)
                if Self.zonePages.contains(statement.sql) {
                    try await connection.perform(
                        PostgresQuery(unsafeSQL: "SELECT " + PreparedStatements.readPagesInFeedOrder), logger: logger)
                }
                try await connection.query(PostgresQuery(unsafeSQL: "PREPARE plan_test_\(index) AS \(statement.sql)"), logger: logger)
                var lines: [String] = []
                for try await line in try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN (COSTS OFF) EXECUTE plan_test_\(index)(\(statement.arguments))"), logger: logger
                ).decode(String.self) {
                    lines.append(line)
                }
                try await connection.query(PostgresQuery(unsafeSQL: "DEALLOCATE plan_test_\(index)"), logger: logger)
                return lines.joined(separator: "\n")
            }
            for table in ["records", "tombstones", "departures"] {
                #expect(!plan.contains("Seq Scan on \(table)"), "\(statement.label): a generic plan scans \(table):\n\(plan)")
            }
            // A statement that reads a large table reads it through an index. One that reads
            // only `zones` may scan it: with one zone per user, PostgreSQL's choice between a
            // scan and the index flips with the statistics of the moment (a fresh-clone CI run
            // planned `Seq Scan on zones` for locking a zone). Finishing a change only calls
            // functions, whose own statements are planned apart.
            if Self.zonePages.contains(statement.sql) {
                #expect(!CloudStoreNewUserPlanTests.sorts(plan), "\(statement.label): a generic plan sorts a page:\n\(plan)")
            }
            let readsLargeTable = ["records", "tombstones", "departures"].contains { statement.sql.contains("strata_cloud.\($0)") }
            if readsLargeTable && statement.sql != PreparedStatements.FinishChange.sql {
                indexChecked.append(statement.label)
                #expect(plan.contains("Index"), "\(statement.label): a generic plan uses no index:\n\(plan)")
            }
        }
        #expect(
            Set(indexChecked).isSuperset(of: [
                "the zone's shape", "the owner's zone page", "a participant's zone page", "the planned starts of later pages",
            ]),
            "\(indexChecked)")
    }

    /// The pages, which the store reads with sorting priced out (``PreparedStatements/readPagesInFeedOrder``, set by ``PreparedStatements/ZoneState``).
    static let zonePages: Set<String> = [
        PreparedStatements.OwnZonePage.sql, PreparedStatements.SharedZonePage.sql, PreparedStatements.PlannedPageStarts.sql,
    ]
}
