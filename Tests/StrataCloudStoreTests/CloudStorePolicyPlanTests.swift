import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// Row-level security must not turn lookups into scans: every query a request makes stays on
/// an index however many users and records the store holds. The test seeds 100 users with
/// 1,000 records each (`STRATA_POLICY_SCALE=full`: 1,000 users, 1,000,000 records, and the
/// plans' timings printed) and reads the plans PostgreSQL chooses as the request role.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct CloudStorePolicyPlanTests {
    static let isFull = ProcessInfo.processInfo.environment["STRATA_POLICY_SCALE"] == "full"

    @Test func policyLookupsStayOnIndexes() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let users = Self.isFull ? 1_000 : 100
        let perUser = 1_000
        let prefix = fixture.user("p")
        let started = ContinuousClock.now
        try await fixture.client.withTransaction(logger: fixture.store.logger) { connection in
            for sql in Self.seed(prefix: prefix, users: users, perUser: perUser) {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: fixture.store.logger)
            }
        }
        try await fixture.client.query("ANALYZE strata_cloud.records")
        try await fixture.client.query("ANALYZE strata_cloud.share_participants")
        let seeded = ContinuousClock.now - started

        // pu2 accepted pu1's share of r1 (records r1...r10), read-only.
        let (owner, participant, stranger) = ("\(prefix)1", "\(prefix)2", "\(prefix)\(users / 2)")
        let queries: [(String, String, String)] = [
            (
                "participant's zone feed", participant,
                """
                SELECT name FROM strata_cloud.records WHERE owner = '\(owner)' AND zone = 'z' AND sequence > 0
                ORDER BY sequence LIMIT 201
                """
            ),
            (
                "owner's zone feed", owner,
                """
                SELECT name FROM strata_cloud.records WHERE owner = '\(owner)' AND zone = 'z' AND sequence > \(perUser - 200)
                ORDER BY sequence LIMIT 201
                """
            ),
            (
                "participant's record fetch", participant,
                """
                SELECT name FROM strata_cloud.records WHERE owner = '\(owner)' AND zone = 'z' AND name = ANY(ARRAY['r1', 'r5', 'r500'])
                """
            ),
            ("stranger's attempt", stranger, "SELECT name FROM strata_cloud.records WHERE owner = '\(owner)' AND zone = 'z'"),
            (
                "participant's shared zones", participant,
                """
                SELECT z.owner FROM strata_cloud.zones z
                WHERE NOT z.deleted AND (z.owner, z.name) IN (SELECT owner, zone FROM strata_cloud.readable_shares())
                """
            ),
        ]
        var report: [String] = ["seeded \(users) users x \(perUser) records in \(seeded)"]
        for (label, user, sql) in queries {
            let (plan, milliseconds, rows) = try await fixture.store.transaction(as: user) { connection in
                var lines: [String] = []
                for try await line in try await connection.query(
                    PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql), logger: fixture.store.logger
                ).decode(String.self) {
                    lines.append(line)
                }
                let started = ContinuousClock.now
                var rows = 0
                for _ in 0..<20 {
                    rows = 0
                    for try await _ in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: fixture.store.logger) { rows += 1 }
                }
                let elapsed = (ContinuousClock.now - started) / 20
                return (
                    lines.joined(separator: "\n"), Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3,
                    rows
                )
            }
            #expect(!plan.contains("Seq Scan on records"), "\(label) scans records:\n\(plan)")
            report.append(String(format: "%@: %d rows, %.3f ms", label, rows, milliseconds))
            if Self.isFull { report.append(plan) }
        }
        if Self.isFull { print(report.joined(separator: "\n")) }
    }

    static func seed(prefix: String, users: Int, perUser: Int) -> [String] {
        let user = "'\(prefix)' || u"
        return [
            "INSERT INTO strata_cloud.users (name) SELECT \(user) FROM generate_series(1, \(users)) u",
            """
            INSERT INTO strata_cloud.zones (owner, name, database_change, sequence)
            SELECT \(user), 'z', 0, \(perUser) FROM generate_series(1, \(users)) u
            """,
            """
            INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size, share_root)
            SELECT \(user), 'z', 'r' || i, 'games', '{"title": {"text": {"_0": "x"}}}', '{}', 't' || i, i, 40,
                CASE WHEN i <= 10 THEN 'r1' END
            FROM generate_series(1, \(users)) u, generate_series(1, \(perUser)) i
            """,
            """
            INSERT INTO strata_cloud.shares (owner, zone, root, public_permission, change_tag)
            SELECT \(user), 'z', 'r1', 'none', 't1' FROM generate_series(1, \(users)) u
            """,
            // Each user shares r1 with the next one, who accepted.
            """
            INSERT INTO strata_cloud.share_participants (owner, zone, root, participant, role, permission, acceptance, position)
            SELECT \(user), 'z', 'r1', '\(prefix)' || (u % \(users) + 1), 'privateUser', 'readOnly', 'accepted', 1
            FROM generate_series(1, \(users)) u
            """,
        ]
    }
}
