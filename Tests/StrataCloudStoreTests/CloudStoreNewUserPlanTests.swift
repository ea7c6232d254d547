import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// A new user's first sync, before PostgreSQL's statistics know them: autovacuum analyzes a
/// table at most once a minute, and a first sync of 100,000 records takes seconds. Every
/// lookup by name must stay on the primary key meanwhile; with the feed indexes usable for
/// them, each lookup read the user's whole zone, and a first sync slowed with the square of
/// its size.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct CloudStoreNewUserPlanTests {
    @Test func lookupsByNameStayOnThePrimaryKeyBeforeStatisticsKnowTheUser() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let veteran = fixture.user("veteran")
        let newcomer = fixture.user("newcomer")
        try await fixture.client.withTransaction(logger: fixture.store.logger) { connection in
            for (user, count) in [(veteran, 2_000), (newcomer, 0)] {
                for sql in Self.seed(user: user, records: count) {
                    try await connection.query(PostgresQuery(unsafeSQL: sql), logger: fixture.store.logger)
                }
            }
        }
        // The statistics know the veteran, and no newcomer record.
        try await fixture.client.query("ANALYZE strata_cloud.records")
        try await fixture.client.withTransaction(logger: fixture.store.logger) { connection in
            for sql in Self.seed(user: newcomer, records: 20_000, zoneExists: true) {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: fixture.store.logger)
            }
        }
        let names = "ARRAY[" + (1...400).map { "'r\($0 * 37)'" }.joined(separator: ", ") + "]::text[]"
        // The statements' shapes as the store writes them (ZoneShape.load, the touched
        // parents' retag, the saved names' tombstones).
        let lateral = { (table: String, column: String) in
            """
            unnest(\(names)) AS n(wanted) CROSS JOIN LATERAL (
                SELECT x.ctid, x.name FROM strata_cloud.\(table) x
                WHERE x.owner = '\(newcomer)' AND x.zone = 'z' AND x.\(column) = n.wanted OFFSET 0) AS found
            """
        }
        let lookups: [(String, String)] = [
            ("a record by name", "SELECT name FROM strata_cloud.records WHERE owner = '\(newcomer)' AND zone = 'z' AND name = 'r5'"),
            ("a request's records by name", "SELECT found.name FROM \(lateral("records", "name"))"),
            ("the children of deleted records", "SELECT found.name FROM \(lateral("records", "parent"))"),
            (
                "touched parents retagged",
                """
                UPDATE strata_cloud.records r SET sequence = r.sequence + 100000
                FROM (SELECT found.ctid AS row FROM \(lateral("records", "name"))) AS matched WHERE r.ctid = matched.row
                """
            ),
            (
                "tombstones of saved names",
                """
                DELETE FROM strata_cloud.tombstones t
                USING (SELECT found.ctid AS row FROM \(lateral("tombstones", "name"))) AS gone WHERE t.ctid = gone.row
                """
            ),
        ]
        for (label, sql) in lookups {
            let plan = try await Self.plan(of: sql, as: newcomer, in: fixture)
            #expect(!plan.contains("_feed"), "\(label) uses a feed index:\n\(plan)")
            #expect(!plan.contains("Seq Scan on records"), "\(label) scans records:\n\(plan)")
            // (The tombstones table holds a few rows of other tests: scanning it is right.)
            if plan.contains("on records") {
                #expect(!plan.contains("Rows Removed by Filter"), "\(label) reads records it does not want:\n\(plan)")
            }
        }
        let feed = try await Self.plan(
            of: """
                SELECT name FROM strata_cloud.records WHERE owner = '\(newcomer)' AND zone = 'z' AND sequence > 19000 AND sequence >= 0
                ORDER BY sequence LIMIT 401
                """, as: newcomer, in: fixture)
        #expect(feed.contains("records_feed"), "the feed does not use its index:\n\(feed)")
    }

    static func plan(of sql: String, as user: String, in fixture: StoreFixture) async throws -> String {
        try await fixture.store.transaction(as: user) { connection in
            var lines: [String] = []
            for try await line in try await connection.query(
                PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql), logger: fixture.store.logger
            ).decode(String.self) {
                lines.append(line)
            }
            return lines.joined(separator: "\n")
        }
    }

    static func seed(user: String, records: Int, zoneExists: Bool = false) -> [String] {
        var statements: [String] = []
        if !zoneExists {
            statements += [
                "INSERT INTO strata_cloud.users (name) VALUES ('\(user)')",
                "INSERT INTO strata_cloud.zones (owner, name, database_change, sequence) VALUES ('\(user)', 'z', 0, 0)",
            ]
        }
        if records > 0 {
            statements.append(
                """
                INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size)
                SELECT '\(user)', 'z', 'r' || i, 'games', '{"title": {"text": {"_0": "x"}}}', '{}', 't' || i, i, 40
                FROM generate_series(1, \(records)) i
                """)
        }
        return statements
    }
}
