import Foundation
import Logging
import PostgresNIO
import StrataCloud
import Synchronization
import Testing

@testable import StrataCloudStore

/// Outside review of migration 12 (`CloudStoreZoneRowsByLock`): "every write of records,
/// tombstones and departures runs under its zone's row lock, taken by a statement that only
/// finds a zone that exists and is not deleted, so no row can end up in a zone that does not
/// exist or is deleted" (Cloud.md, Storage).
///
/// Each test runs in a scratch database of its own (``ScratchDatabase``): they hold table
/// locks, or migrate, which other suites sharing the test database must not wait behind.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(3)))
struct OutsideZoneRowsByLockTests {
    /// `deleteZones` locks its zones with `SELECT … FOR UPDATE`, which locks nothing for a zone
    /// whose row does not exist yet. It used to go on with the names it was asked for: it
    /// deleted the zones' records and tombstones and, several statements later, marked them
    /// deleted with an `UPDATE … WHERE NOT deleted` that (READ COMMITTED, a snapshot per
    /// statement) found a zone made and written meanwhile, which then ended marked deleted
    /// with the rows written into it (found by this outside review). It now acts on the zones
    /// it locked only: a zone that did not exist when the deletion began is a new zone, and
    /// keeps what was written into it.
    ///
    /// The gap between the deletion's statements is widened by a `SHARE` lock on `departures`
    /// (which the deletion's statement deleting departures and shares writes, after its
    /// records and tombstones and before it marks the zones; the writes below do not), so that
    /// the interleaving is certain; in service it is a few round trips wide.
    @Test func aZoneMadeWhileItsDeletionIsUnderWayIsANewZoneAndKeepsItsRows() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        try await ScratchDatabase.withMigratedStore(fixture: fixture) { store, client in
            let alice = store.privateDatabase(of: "alice")
            let keep = CloudZoneID(name: "keep", owner: "alice")
            let zone = CloudZoneID(name: "games", owner: "alice")
            try await alice.saveZones([keep])

            let holder = try await RowHolder.hold(
                "LOCK TABLE strata_cloud.departures IN SHARE MODE", through: client, logger: fixture.logger)
            // A device deletes `keep` and `games`, which another device is making at the same
            // moment: the deletion locks `keep` only, and waits at the departures.
            let deleter = Task { try await alice.deleteZones([keep, zone]) }
            try await holder.waitUntilSomeoneWaits(through: client, logger: fixture.logger)
            try await alice.saveZones([zone])
            let kept = CloudRecordID(name: "kept", zone: zone)
            let removed = CloudRecordID(name: "removed", zone: zone)
            let saved = try await alice.modifyRecords(
                saving: [CloudRecord(id: kept, type: "games"), CloudRecord(id: removed, type: "games")], deleting: [])
            #expect(saved.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } })
            _ = try await alice.modifyRecords(saving: [], deleting: [removed])
            holder.release()
            try await holder.task.value
            try await deleter.value

            var deleted = false
            for try await flag in try await client.query(
                "SELECT deleted FROM strata_cloud.zones WHERE owner = \(zone.owner) AND name = \(zone.name)", logger: fixture.logger
            ).decode(Bool.self) {
                deleted = flag
            }
            #expect(!deleted, "the deletion marked a zone made after it began")
            #expect(
                try await Self.isDeleted("keep", through: client, logger: fixture.logger),
                "the zone the deletion locked was not deleted")
            let outside = try await Self.rowsOutsideALiveZone(of: "alice", through: client, logger: fixture.logger)
            #expect(outside.isEmpty, "rows in a zone that is deleted: \(outside)")
            let fetched = try await alice.fetchRecords([kept, removed])
            #expect(fetched[kept].map { if case .success = $0 { true } else { false } } == true, "\(String(describing: fetched[kept]))")
            #expect(fetched[removed].map { if case .failure(.unknownItem) = $0 { true } else { false } } == true)
            let changes = try await alice.fetchZoneChanges(zone, since: nil, limit: 10)
            #expect(changes.changed.map(\.id.name) == ["kept"] && changes.deleted.map(\.id.name) == ["removed"])
        }
    }

    /// The same gap, with a share: the owner shares a root of the zone while its deletion is
    /// under way, and the share's transaction (holding the zone's lock) commits after the
    /// deletion deleted the zone's shares. The deletion used to wait for that lock and mark the
    /// zone deleted anyway: it ended deleted with its records, a share and its participant,
    /// who could accept the share of the deleted zone, and leaving it (`leave_share`)
    /// wrote departures into the deleted zone. The deletion now leaves alone a zone it did not
    /// lock when it began: the zone stays live with its share, accepting and leaving it work
    /// on a live zone, and no row is in a deleted one.
    @Test func aZoneSharedWhileItsDeletionIsUnderWayKeepsItsShare() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let logger = fixture.logger
        try await ScratchDatabase.withMigratedStore(fixture: fixture) { store, client in
            let alice = store.privateDatabase(of: "alice")
            let zone = CloudZoneID(name: "games", owner: "alice")
            let keep = CloudZoneID(name: "keep", owner: "alice")
            try await alice.saveZones([keep])

            let departuresHeld = try await RowHolder.hold(
                "LOCK TABLE strata_cloud.departures IN SHARE MODE", through: client, logger: logger)
            let deleter = Task { try await alice.deleteZones([keep, zone]) }
            try await departuresHeld.waitUntilSomeoneWaits(through: client, logger: logger)
            try await alice.saveZones([zone])
            let root = CloudRecordID(name: "root", zone: zone)
            _ = try await alice.modifyRecords(
                saving: [
                    CloudRecord(id: root, type: "games"),
                    CloudRecord(id: CloudRecordID(name: "child", zone: zone), type: "games", parent: root),
                ],
                deleting: [])
            // The share's transaction is held at its last step (the owner's database feed, on
            // the user's row), holding the zone's row.
            let userHeld = try await RowHolder.hold(
                "SELECT 1 FROM strata_cloud.users WHERE name = 'alice' FOR UPDATE", through: client, logger: logger)
            let sharer = Task {
                var share = CloudShare(rootRecordID: root, title: "games")
                share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
                return try await alice.saveShare(share)
            }
            try await userHeld.waitUntilSomeoneWaits(through: client, logger: logger)
            departuresHeld.release()
            try await departuresHeld.task.value
            // The deletion is past the departures and shares (none of `games` committed yet)
            // and waits, as the share does, for the owner's row to move the database feed.
            try await Self.waitUntilWaiting(count: 2, through: client, logger: logger)
            userHeld.release()
            try await userHeld.task.value
            let share = try await sharer.value
            try await deleter.value

            var deleted = false
            for try await flag in try await client.query(
                "SELECT deleted FROM strata_cloud.zones WHERE owner = 'alice' AND name = 'games'", logger: logger
            ).decode(Bool.self) {
                deleted = flag
            }
            #expect(!deleted, "the deletion marked a zone made after it began")
            #expect(try await Self.isDeleted("keep", through: client, logger: logger), "the zone the deletion locked was not deleted")
            let left = try await Self.counts(through: client, logger: logger, zone: "games")
            #expect(left.shares == 1 && left.records == 2, "\(left)")
            let outside = try await Self.rowsOutsideALiveZone(of: "alice", through: client, logger: logger)
            #expect(outside.isEmpty, "rows in a zone that is deleted: \(outside)")

            // Bob accepts the share of the live zone, then leaves it.
            let accepted = try? await store.container(for: "bob").acceptShare(url: share.url)
            #expect(accepted != nil, "bob could not accept the share of a live zone")
            let bob = store.sharedDatabase(of: "bob")
            try? await bob.deleteShare(rootRecordID: root)
            var departures: [String] = []
            for try await line in try await client.query(
                """
                SELECT d.name || ' for ' || array_to_string(d.audience, ',') FROM strata_cloud.departures d
                JOIN strata_cloud.zones z ON z.owner = d.owner AND z.name = d.zone
                WHERE d.owner = 'alice' AND d.zone = 'games' AND z.deleted ORDER BY 1
                """, logger: logger
            ).decode(String.self) {
                departures.append(line)
            }
            #expect(departures.isEmpty, "leave_share wrote departures into the deleted zone: \(departures)")
        }
    }

    /// Migration 12 applied to a database at migration 11 that holds zones with records,
    /// tombstones, departures and shares, while a writer of one zone is held before its commit
    /// and a participant's write queues behind the migration: the migration waits for the
    /// writer (it takes `zones` first, as requests do) instead of deadlocking with it, every
    /// request ends, no row is lost, the keys are gone, and a zone's row deleted by hand
    /// afterwards takes its rows with it.
    @Test func migration12OnAServingDatabaseAtMigration11WaitsForAWriterAndKeepsEveryRow() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let scratch = try await ScratchDatabase(fixture: fixture)
        let running = try scratch.client()
        let logger = fixture.logger
        do {
            let client = running.client
            // The schema as migration 11 left it.
            try await CloudStoreMigrations.run(on: client, logger: logger, through: 11)
            let store = CloudStore(client: client, logger: logger)
            let alice = store.privateDatabase(of: "alice")
            let games = CloudZoneID(name: "games", owner: "alice")
            let notes = CloudZoneID(name: "notes", owner: "alice")
            try await alice.saveZones([games, notes])
            let root = CloudRecordID(name: "root", zone: games)
            _ = try await alice.modifyRecords(
                saving: [CloudRecord(id: root, type: "games")]
                    + (1...5).map {
                        CloudRecord(id: CloudRecordID(name: "c\($0)", zone: games), type: "games", parent: .init(name: "root", zone: games))
                    },
                deleting: [])
            _ = try await alice.modifyRecords(saving: [], deleting: [CloudRecordID(name: "c5", zone: games)])
            var share = CloudShare(rootRecordID: root, title: "games")
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            share.participants.append(CloudShare.Participant(user: "carol", permission: .readOnly))
            share = try await alice.saveShare(share)
            _ = try await store.container(for: "bob").acceptShare(url: share.url)
            _ = try await store.container(for: "carol").acceptShare(url: share.url)
            share = try await alice.fetchShare(rootRecordID: root)
            share.participants.removeAll { $0.user == "carol" }
            share = try await alice.saveShare(share)
            let bob = store.sharedDatabase(of: "bob")
            _ = try await bob.modifyRecords(
                saving: [
                    CloudRecord(id: CloudRecordID(name: "bob1", zone: games), type: "games", parent: .init(name: "root", zone: games))
                ],
                deleting: [])
            for zone in [notes] {
                _ = try await alice.modifyRecords(
                    saving: (1...3).map { CloudRecord(id: CloudRecordID(name: "n\($0)", zone: zone), type: "notes") }, deleting: [])
            }
            let before = try await Self.counts(through: client, logger: logger)
            #expect(before.departures > 0 && before.tombstones > 0 && before.records > 0, "\(before)")

            // A writer of `notes` held before its commit, holding the zone's row.
            let hold = StoreFixture.holdNextWriteBeforeCommit(of: store)
            let writer = Task {
                defer { hold.holding.finish() }
                return try await alice.modifyRecords(
                    saving: [CloudRecord(id: CloudRecordID(name: "held", zone: notes), type: "notes")], deleting: [])
            }
            guard await hold.waitUntilHeld() else {
                Issue.record("the write never reached its commit: \(String(describing: await writer.result))")
                running.stop()
                try await scratch.drop()
                return
            }
            let migration = Task { try await CloudStoreMigrations.run(on: client, logger: logger, through: 12) }
            try await Self.waitUntilWaiting(count: 1, through: client, logger: logger)
            // A participant's write and a leave queue behind the migration.
            let participantWrite = Task {
                try await bob.modifyRecords(
                    saving: [
                        CloudRecord(id: CloudRecordID(name: "bob2", zone: games), type: "games", parent: .init(name: "root", zone: games))
                    ],
                    deleting: [])
            }
            try await Self.waitUntilWaiting(count: 2, through: client, logger: logger)
            hold.release.yield()
            let held = try await writer.value
            #expect(held.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } })
            #expect(try await migration.value == [12])
            let bobs = try await participantWrite.value
            #expect(bobs.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } }, "\(bobs)")

            let after = try await Self.counts(through: client, logger: logger)
            #expect(after.records == before.records + 2 && after.tombstones == before.tombstones && after.departures == before.departures)
            var keys: [String] = []
            for try await name in try await client.query(
                """
                SELECT conname::text FROM pg_constraint
                WHERE contype = 'f' AND confrelid = 'strata_cloud.zones'::regclass ORDER BY 1
                """, logger: logger
            ).decode(String.self) {
                keys.append(name)
            }
            #expect(keys == ["shares_owner_zone_fkey"], "\(keys)")

            // A zone's row deleted by hand takes its rows, shares included.
            try await client.query("DELETE FROM strata_cloud.zones WHERE owner = 'alice' AND name = 'games'", logger: logger)
            let left = try await Self.counts(through: client, logger: logger, zone: "games")
            #expect(left == Counts(), "\(left)")
        } catch {
            Issue.record("\(String(reflecting: error))")
        }
        running.stop()
        try await scratch.drop()
    }

    /// Without the keys, row-level security is all that keeps a user's raw SQL (as the request
    /// role) out of zones that do not exist. A read-write participant of alice's shared zone,
    /// and a stranger, can put no record, tombstone or departure into a zone of alice's that
    /// was never made, nor move a shared record there; what alice puts there herself (the
    /// accepted consequence) reaches nobody else's reads, not even with bob in its audience.
    @Test func rawSQLPutsNoRowOfAnotherUserInAZoneThatWasNeverMade() async throws {
        let scene = try await CloudStoreIsolationTests.Scene(bobsPermission: .readWrite)
        defer { scene.fixture.stop() }
        let (alice, bob) = (scene.alice, scene.bob)
        let stranger = scene.fixture.user("carol")
        let inserts = [
            """
            INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size, share_root)
            VALUES ('\(alice)', 'never-made', 'x', 'games', '{}', '{}', 't1', 1, 1, 'g1') RETURNING name
            """,
            """
            INSERT INTO strata_cloud.tombstones (owner, zone, name, type, sequence, audience)
            VALUES ('\(alice)', 'never-made', 'x', 'games', 1, ARRAY['\(bob)']) RETURNING name
            """,
            """
            INSERT INTO strata_cloud.departures (owner, zone, name, type, sequence, audience)
            VALUES ('\(alice)', 'never-made', 'x', 'games', 1, ARRAY['\(bob)']) RETURNING name
            """,
        ]
        for user in [bob, stranger] {
            for sql in inserts {
                let result = await scene.run(sql, as: user)
                #expect(CloudStoreIsolationTests().refused(result), "\(user): \(sql) -> \(result)")
            }
            let moved = await scene.run(
                "UPDATE strata_cloud.records SET zone = 'never-made' WHERE owner = '\(alice)' AND name = 'g1' RETURNING name", as: user)
            if case .success(let names) = moved { #expect(names.isEmpty, "\(user) moved \(names) out of the zone") }
        }
        for sql in inserts { _ = try await scene.run(sql, as: alice).get() }
        for table in CloudStoreZoneRowsByLock.tables {
            let seen = try await scene.run(
                "SELECT name FROM strata_cloud.\(table) WHERE owner = '\(alice)' AND zone = 'never-made'", as: bob
            ).get()
            #expect(seen.isEmpty, "bob reads alice's \(table) of a zone that was never made: \(seen)")
        }
        let games = try await scene.run(
            "SELECT name FROM strata_cloud.records WHERE owner = '\(alice)' AND zone = 'games' ORDER BY name", as: alice
        ).get()
        #expect(games == ["g1", "g2", "p1"], "\(games)")
        // Alice's rows outside any zone go, so that no check of the shared test database sees them.
        for table in CloudStoreZoneRowsByLock.tables {
            try await scene.fixture.client.query(
                PostgresQuery(unsafeSQL: "DELETE FROM strata_cloud.\(table) WHERE owner = '\(alice)' AND zone = 'never-made'"),
                logger: scene.fixture.logger)
        }
    }

    /// The trigger that stands for `ON DELETE CASCADE` deletes what its statement sees; the
    /// key's check took the zone's row (`FOR KEY SHARE`) for every row inserted, so an insert
    /// waited for a deletion of the zone by hand and then failed. A read-write participant's
    /// raw insert (as the request role, without the zone's lock) while an operator's deletion
    /// of the zone is uncommitted now goes through: the participant's record outlives the
    /// zone, and shows in the zone the owner makes again under the same name.
    ///
    /// Accepted, and kept as a known issue (Cloud.md, Storage): the service never writes
    /// without the zone's lock, and whoever runs raw SQL as the request role can name any user
    /// in `strata.user` and write that user's zones directly; the race needs that, and an
    /// operator deleting the zone's row by hand at the same moment.
    @Test func aParticipantsInsertBesideAZoneDeletedByHandOutlivesTheZone() async throws {
        let scene = try await CloudStoreIsolationTests.Scene(bobsPermission: .readWrite)
        let fixture = scene.fixture
        defer { fixture.stop() }
        let (alice, bob, zone) = (scene.alice, scene.bob, scene.zone)
        let deletion = try await RowHolder.hold(
            "DELETE FROM strata_cloud.zones WHERE owner = \(alice) AND name = \(zone.name)", through: fixture.client, logger: fixture.logger
        )
        let done = Mutex(false)
        let insert = Task {
            defer { done.withLock { $0 = true } }
            return await scene.run(
                """
                INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size, share_root, parent)
                VALUES ('\(alice)', 'games', 'bob-injected', 'players', '{}', '{}', 't99', 99, 1, 'g1', 'g1') RETURNING name
                """, as: bob)
        }
        // The insert ends, or waits for the deletion (as the key made it).
        var settled = false
        for _ in 0..<20_000 where !settled {
            if done.withLock({ $0 }) { settled = true; break }
            for try await waiting in try await fixture.client.query(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND \(deletion.pid) = ANY(pg_blocking_pids(pid))"
            ).decode(Int64.self) where waiting > 0 {
                settled = true
            }
            await Task.yield()
        }
        #expect(settled)
        deletion.release()
        try await deletion.task.value
        let inserted = await insert.value
        try await withKnownIssue("a raw insert without the zone's lock, beside a hand deletion of the zone, outlives it") {
            if case .success = inserted {
                let outside = try await Self.rowsOutsideALiveZone(of: alice, through: fixture.client, logger: fixture.logger)
                #expect(outside.isEmpty, "bob's insert beside the deletion left rows in a zone that is gone: \(outside)")
                let database = fixture.store.privateDatabase(of: alice)
                try await database.saveZones([zone])
                let injected = CloudRecordID(name: "bob-injected", zone: zone)
                if case .success = try await database.fetchRecords([injected])[injected] {
                    Issue.record("the zone alice made again holds bob's record from before the zone was deleted")
                }
            }
        }
        for table in CloudStoreZoneRowsByLock.tables {
            try await fixture.client.query(
                PostgresQuery(unsafeSQL: "DELETE FROM strata_cloud.\(table) WHERE owner = '\(alice)'"), logger: fixture.logger)
        }
    }

    // MARK: Helpers

    static func isDeleted(_ zone: String, through client: PostgresClient, logger: Logger) async throws -> Bool {
        var deleted = false
        for try await flag in try await client.query(
            "SELECT deleted FROM strata_cloud.zones WHERE owner = 'alice' AND name = \(zone)", logger: logger
        ).decode(Bool.self) {
            deleted = flag
        }
        return deleted
    }

    struct Counts: Equatable, CustomStringConvertible {
        var records: Int64 = 0
        var tombstones: Int64 = 0
        var departures: Int64 = 0
        var shares: Int64 = 0
        var description: String { "records \(records), tombstones \(tombstones), departures \(departures), shares \(shares)" }
    }

    static func counts(through client: PostgresClient, logger: Logger, zone: String? = nil) async throws -> Counts {
        var counts = Counts()
        for try await row in try await client.query(
            """
            SELECT (SELECT count(*) FROM strata_cloud.records WHERE \(zone)::text IS NULL OR zone = \(zone)),
                (SELECT count(*) FROM strata_cloud.tombstones WHERE \(zone)::text IS NULL OR zone = \(zone)),
                (SELECT count(*) FROM strata_cloud.departures WHERE \(zone)::text IS NULL OR zone = \(zone)),
                (SELECT count(*) FROM strata_cloud.shares WHERE \(zone)::text IS NULL OR zone = \(zone))
            """, logger: logger
        ).decode((Int64, Int64, Int64, Int64).self) {
            counts = Counts(records: row.0, tombstones: row.1, departures: row.2, shares: row.3)
        }
        return counts
    }

    /// Every record, tombstone and departure of `owner` whose zone's row is gone or marked deleted.
    static func rowsOutsideALiveZone(of owner: String, through client: PostgresClient, logger: Logger) async throws -> [String] {
        var outside: [String] = []
        for try await line in try await client.query(
            PostgresQuery(
                unsafeSQL: CloudStoreZoneRowsByLock.tables.map { table in
                    """
                    SELECT '\(table) ' || t.zone || '/' || t.name FROM strata_cloud.\(table) t WHERE t.owner = $1 AND NOT EXISTS (
                        SELECT 1 FROM strata_cloud.zones z WHERE z.owner = t.owner AND z.name = t.zone AND NOT z.deleted)
                    """
                }.joined(separator: " UNION ALL "),
                binds: {
                    var b = PostgresBindings(); b.append(owner); return b
                }()),
            logger: logger
        ).decode(String.self) {
            outside.append(line)
        }
        return outside.sorted()
    }

    /// Returns once at least `count` sessions of the current database wait for a lock.
    static func waitUntilWaiting(count: Int64, through client: PostgresClient, logger: Logger) async throws {
        for _ in 0..<20_000 {
            for try await waiting in try await client.query(
                """
                SELECT count(DISTINCT l.pid) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                WHERE NOT l.granted AND a.datname = current_database()
                """, logger: logger
            ).decode(Int64.self) where waiting >= count {
                return
            }
            await Task.yield()
        }
        Issue.record("fewer than \(count) sessions ever waited for a lock")
    }
}
