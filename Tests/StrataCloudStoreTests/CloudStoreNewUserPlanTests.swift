import Foundation
import Logging
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
        // The page as the store reads it: its own statement, after the zone's state the store
        // reads first (which turns sorting off).
        let page = try await fixture.store.transaction(as: newcomer) { connection in
            let state = try await connection.rows(
                of: PreparedStatements.ZoneState(owner: newcomer, zone: "z"), logger: fixture.store.logger)
            #expect(state.count == 1 && state.first?.2 == "off", "\(state)")
            return try await Self.plan(
                ofPrepared: PreparedStatements.OwnZonePage.sql, arguments: "'\(newcomer)', 'z', 19000, 19000, 401", on: connection,
                logger: fixture.store.logger)
        }
        #expect(page.contains("records_feed"), "the page does not use its index:\n\(page)")
        #expect(!Self.sorts(page), "the page sorts what its index orders:\n\(page)")
    }

    /// The shape of a service with many small users: PostgreSQL's statistics know them all,
    /// and estimate any owner outside them at a handful of rows. A user who then writes
    /// 20,000 records is read through the primary key and sorted, every one of their changes
    /// after the token for each page of 400, unless sorting is priced out as the store does.
    /// The tables are private copies (temporary, same columns and indexes) so that the
    /// statistics are exactly these, whatever other tests wrote to the shared ones.
    /// The zone's state, which the store reads before each page, turns sorting off for that
    /// transaction only: the next transaction, on whichever connection, sorts again.
    @Test func sortingIsOffForThePagesTransactionOnly() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("z", of: "alice")
        try await alice.saveZones([zone])
        let inside = try await fixture.store.transaction(as: zone.owner) { connection in
            let before = try await Self.sortSetting(on: connection, fixture: fixture)
            let state = try await connection.rows(
                of: PreparedStatements.ZoneState(owner: zone.owner, zone: zone.name), logger: fixture.store.logger)
            return (before, state.map(\.2), try await Self.sortSetting(on: connection, fixture: fixture))
        }
        #expect(inside.0 == "on" && inside.1 == ["off"] && inside.2 == "off", "\(inside)")
        for _ in 0..<4 {
            _ = try await alice.fetchZoneChanges(zone, since: nil, limit: 10)
            let after = try await fixture.store.transaction(as: zone.owner) { connection in
                try await Self.sortSetting(on: connection, fixture: fixture)
            }
            #expect(after == "on")
        }
    }

    static func sortSetting(on connection: PostgresConnection, fixture: StoreFixture) async throws -> String {
        var setting = ""
        for try await value in try await connection.query("SELECT current_setting('enable_sort')", logger: fixture.store.logger)
            .decode(String.self)
        {
            setting = value
        }
        return setting
    }

    @Test(arguments: [false, true])
    func aPageReadsInFeedOrderWhateverTheStatisticsBelieve(shared: Bool) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let logger = fixture.store.logger
        let statement = shared ? PreparedStatements.SharedZonePage.sql : PreparedStatements.OwnZonePage.sql
        let privateStatement = statement.replacingOccurrences(of: "strata_cloud.", with: "pg_temp.")
        #expect(privateStatement != statement)
        let (before, after) = try await fixture.client.withConnection { connection in
            try await connection.query("BEGIN", logger: logger)
            for table in ["records", "tombstones", "departures"] {
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            CREATE TEMPORARY TABLE \(table) (LIKE strata_cloud.\(table) INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)
                            ON COMMIT DROP
                            """), logger: logger)
            }
            // 3,000 users of 10 records each, their positions scattered: 30,000 rows, which
            // ANALYZE reads whole (its sample is 300 × the statistics target of 100).
            try await connection.query(
                """
                INSERT INTO records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size)
                SELECT 'small' || u, 'z', 'r' || i, 'games', '{}', '{}', 't', hashtext(u || '/' || i) & 1048575, 40
                FROM generate_series(1, 10) i, generate_series(1, 3000) u
                """, logger: logger)
            try await connection.query("ANALYZE records", logger: logger)
            try await connection.query(
                """
                INSERT INTO records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size)
                SELECT 'newcomer', 'z', 'r' || i, 'games', '{}', '{}', 't', i, 40 FROM generate_series(1, 20000) i
                """, logger: logger)
            let arguments = "'newcomer', 'z', 0, 0, 401"
            let before = try await Self.plan(ofPrepared: privateStatement, arguments: arguments, on: connection, logger: logger)
            try await connection.perform(PostgresQuery(unsafeSQL: "SELECT " + PreparedStatements.readPagesInFeedOrder), logger: logger)
            let after = try await Self.plan(ofPrepared: privateStatement, arguments: arguments, on: connection, logger: logger)
            try await connection.query("ROLLBACK", logger: logger)
            return (before, after)
        }
        // The shape misleads PostgreSQL: without the store's setting, the page sorts the
        // user's every record (if this stops holding, the shape no longer tests anything).
        #expect(Self.sorts(before) && before.contains("actual rows=20000"), "the shape no longer misleads the planner:\n\(before)")
        #expect(after.contains("Index Scan using records_owner_zone_sequence_idx"), "the page does not use its index:\n\(after)")
        #expect(!Self.sorts(after), "the page sorts what its index orders:\n\(after)")
        #expect(!after.contains("actual rows=20000"), "the page reads the user's every record:\n\(after)")
    }

    /// Whether a plan has a sort node (a merge's `Sort Key` is not one).
    static func sorts(_ plan: String) -> Bool {
        plan.split(separator: "\n").contains { line in
            let node = line.drop { $0 == " " || $0 == "-" || $0 == ">" }
            // With costs, a node reads `Sort  (cost=…`; with `COSTS OFF`, `Sort` alone.
            return node == "Sort" || node.hasPrefix("Sort (") || node.hasPrefix("Sort  (") || node == "Incremental Sort"
                || node.hasPrefix("Incremental Sort (") || node.hasPrefix("Incremental Sort  (")
        }
    }

    /// The plan of `sql` prepared and executed with `arguments`, on the caller's connection.
    static func plan(
        ofPrepared sql: String, arguments: String, on connection: PostgresConnection, logger: Logger
    ) async throws
        -> String
    {
        try await connection.query(PostgresQuery(unsafeSQL: "PREPARE plan_test AS \(sql)"), logger: logger)
        var lines: [String] = []
        for try await line in try await connection.query(
            PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) EXECUTE plan_test(\(arguments))"), logger: logger
        ).decode(String.self) {
            lines.append(line)
        }
        try await connection.query("DEALLOCATE plan_test", logger: logger)
        return lines.joined(separator: "\n")
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
