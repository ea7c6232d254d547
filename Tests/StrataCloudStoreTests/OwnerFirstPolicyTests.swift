import Foundation
import PostgresNIO
import StrataCloud
import Synchronization
import Testing

@testable import StrataCloudStore

/// An owner's statements never run the share functions row-level security holds for
/// participants (`CloudStoreOwnerFirstPolicies`): each protected table is read, written and
/// deleted from as its owner under `EXPLAIN ANALYZE`, and every function scan of
/// `readable_shares()`, `writable_shares()`, `asset_peers()` or `profile_peers()` in the plan
/// must be one PostgreSQL never executed. The same statements as a participant still run them,
/// and still see and change only what the shares allow.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct OwnerFirstPolicyTests {
    static let shareFunctions = ["readable_shares", "writable_shares", "asset_peers", "profile_peers"]

    /// Rolls the statements' writes back after their plans are read.
    struct RollBack: Error {}

    /// The plans of `statements` run as `user` in one transaction that is then rolled back.
    static func plans(of statements: [String], as user: String, fixture: StoreFixture) async throws -> [String] {
        let plans = Mutex<[String]>([])
        do {
            _ = try await fixture.store.transaction(as: user) { connection in
                for sql in statements {
                    var lines: [String] = []
                    for try await line in try await connection.query(
                        PostgresQuery(unsafeSQL: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) " + sql), logger: fixture.logger
                    ).decode(String.self) {
                        lines.append(line)
                    }
                    plans.withLock { $0.append(lines.joined(separator: "\n")) }
                }
                throw RollBack()
            }
        } catch is RollBack {}
        return plans.withLock { $0 }
    }

    /// The plan's lines that scan a share function, executed or not.
    static func shareFunctionScans(in plan: String) -> [Substring] {
        plan.split(separator: "\n").filter { line in
            line.contains("Function Scan on") && shareFunctions.contains { line.contains($0) }
        }
    }

    /// Statements touching every protected table and command, for `owner`'s rows.
    static func statements(owner: String, zone: String) -> [String] {
        let tables = ["records", "zones", "tombstones", "departures", "shares", "share_participants", "assets", "asset_chunks"]
        let reads = tables.map { "SELECT count(*) FROM strata_cloud.\($0) WHERE owner = '\(owner)'" }
        // The request role may not update assets (they are written once) nor delete zones.
        let updates = tables.filter { !$0.hasPrefix("asset") }.map {
            "UPDATE strata_cloud.\($0) SET owner = owner WHERE owner = '\(owner)'"
        }
        let deletes = ["records", "tombstones", "departures", "share_participants", "shares"].map {
            "DELETE FROM strata_cloud.\($0) WHERE owner = '\(owner)'"
        }
        return reads + updates + [
            "SELECT sequence FROM strata_cloud.zones WHERE owner = '\(owner)' AND name = '\(zone)' FOR UPDATE",
            """
            INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size)
            VALUES ('\(owner)', '\(zone)', 'added', 'games', '{}', '{}', 't99', 99, 1)
            """,
            """
            INSERT INTO strata_cloud.tombstones (owner, zone, name, type, sequence, audience)
            VALUES ('\(owner)', '\(zone)', 'gone', 'games', 98, '{}')
            """,
            "SELECT count(*) FROM strata_cloud.user_profiles",
        ] + deletes
    }

    @Test func anOwnersStatementsRunNoShareFunction() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let (alice, bob) = (fixture.user("alice"), fixture.user("bob"))
        let share = try await fixture.aliceSharesARoot(with: bob)
        _ = try await fixture.store.container(for: bob).acceptShare(url: share.url)
        // Alice also takes part in a share of Bob's: the functions have rows for her.
        let bobs = fixture.database("bob")
        let bobsZone = fixture.zone("notes", of: "bob")
        try await bobs.saveZones([bobsZone])
        let bobsRoot = CloudRecordID(name: "note", zone: bobsZone)
        _ = try await bobs.modifyRecords(saving: [CloudRecord(id: bobsRoot, type: "notes")], deleting: [])
        var bobsShare = CloudShare(rootRecordID: bobsRoot, title: "notes")
        bobsShare.participants.append(CloudShare.Participant(user: alice, permission: .readWrite))
        let savedShare = try await bobs.saveShare(bobsShare)
        _ = try await fixture.store.container(for: alice).acceptShare(url: savedShare.url)

        let statements = Self.statements(owner: alice, zone: "games")
        let plans = try await Self.plans(of: statements, as: alice, fixture: fixture)
        #expect(plans.count == statements.count)
        var scansSeen = 0
        for (sql, plan) in zip(statements, plans) {
            let scans = Self.shareFunctionScans(in: plan)
            scansSeen += scans.count
            for scan in scans {
                #expect(scan.contains("never executed"), "as the owner, \(sql)\nran a share function:\n\(plan)")
            }
        }
        // The policies do hold the functions: the check above looked at real scans.
        #expect(scansSeen >= statements.count)

        // Bob, a participant of Alice's share, runs them, and sees only the shared subtree.
        let participantPlans = try await Self.plans(
            of: ["SELECT count(*) FROM strata_cloud.records WHERE owner = '\(alice)'"], as: bob, fixture: fixture)
        let participantScans = participantPlans.flatMap(Self.shareFunctionScans(in:))
        #expect(participantScans.contains { !$0.contains("never executed") }, "\(participantPlans)")
    }

    @Test func whatEachUserSeesAndChangesIsUnchanged() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let (alice, bob, carol) = (fixture.user("alice"), fixture.user("bob"), fixture.user("carol"))
        let share = try await fixture.aliceSharesARoot(with: bob, permission: .readOnly)
        _ = try await fixture.store.container(for: bob).acceptShare(url: share.url)
        let zone = fixture.zone("games", of: "alice")
        let alices = fixture.database("alice")
        _ = try await alices.modifyRecords(
            saving: [
                CloudRecord(id: CloudRecordID(name: "child", zone: zone), type: "rounds", parent: CloudRecordID(name: "root", zone: zone)),
                CloudRecord(id: CloudRecordID(name: "private", zone: zone), type: "games"),
            ],
            deleting: [])

        func count(_ table: String, as user: String) async throws -> Int64 {
            try await fixture.store.transaction(as: user) { connection in
                var count: Int64 = 0
                for try await value in try await connection.query(
                    PostgresQuery(unsafeSQL: "SELECT count(*) FROM strata_cloud.\(table) WHERE owner = '\(alice)'"), logger: fixture.logger
                ).decode(Int64.self) {
                    count = value
                }
                return count
            }
        }
        #expect(try await count("records", as: alice) == 3)
        #expect(try await count("records", as: bob) == 2)
        #expect(try await count("records", as: carol) == 0)
        #expect(try await count("zones", as: bob) == 1)
        #expect(try await count("zones", as: carol) == 0)
        #expect(try await count("shares", as: bob) == 1)
        #expect(try await count("shares", as: carol) == 0)

        // A read-only participant changes nothing of Alice's; the owner may.
        func updated(as user: String) async throws -> Int {
            try await fixture.store.transaction(as: user) { connection in
                var rows = 0
                for try await _ in try await connection.query(
                    PostgresQuery(unsafeSQL: "UPDATE strata_cloud.records SET size = size WHERE owner = '\(alice)' RETURNING 1"),
                    logger: fixture.logger)
                {
                    rows += 1
                }
                return rows
            }
        }
        #expect(try await updated(as: bob) == 0)
        #expect(try await updated(as: carol) == 0)
        #expect(try await updated(as: alice) == 3)
        await #expect(throws: (any Error).self) {
            try await fixture.store.transaction(as: bob) { connection in
                try await connection.query(
                    PostgresQuery(
                        unsafeSQL: """
                            INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size, share_root)
                            VALUES ('\(alice)', 'games', 'forged', 'games', '{}', '{}', 't99', 99, 1, 'root')
                            """), logger: fixture.logger)
            }
        }
    }
}
