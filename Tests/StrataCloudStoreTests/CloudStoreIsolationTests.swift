import Foundation
import PostgresNIO
import StrataCloud
import Testing

@testable import StrataCloudStore

/// Isolation is PostgreSQL's, not only the store's code: raw SQL run the way every request
/// runs (as `strata_request`, with the user set for the transaction) reaches nothing of
/// another user's but what they shared, with the permission they gave.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct CloudStoreIsolationTests {
    /// Alice's zone with a shared game g1 (player p1 under it) and a private game g2.
    struct Scene {
        let fixture: StoreFixture
        let zone: CloudZoneID
        let alice: String
        let bob: String
        let game: CloudRecordID

        init(bobsPermission: CloudShare.Permission?) async throws {
            fixture = try await StoreFixture()
            alice = fixture.user("alice")
            bob = fixture.user("bob")
            zone = fixture.zone("games", of: "alice")
            game = CloudRecordID(name: "g1", zone: zone)
            let database = fixture.store.privateDatabase(of: alice)
            try await database.saveZones([zone])
            _ = try await database.modifyRecords(
                saving: [
                    CloudRecord(id: game, type: "games", fields: ["title": .text("Poker")]),
                    CloudRecord(id: CloudRecordID(name: "p1", zone: zone), type: "players", parent: game),
                    CloudRecord(id: CloudRecordID(name: "g2", zone: zone), type: "games", fields: ["title": .text("Secret")]),
                ], deleting: [])
            if let bobsPermission {
                var share = CloudShare(rootRecordID: game)
                share.participants.append(CloudShare.Participant(user: bob, permission: bobsPermission))
                share = try await database.saveShare(share)
                _ = try await fixture.store.container(for: bob).acceptShare(url: share.url)
            }
        }

        /// Runs `sql` as `user` the way the store runs every request; returns the rows' first
        /// column as text, or the refusal.
        func run(_ sql: String, as user: String) async -> Result<[String], Error> {
            do {
                return .success(
                    try await fixture.store.transaction(as: user) { connection in
                        var values: [String] = []
                        for try await value in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: fixture.store.logger)
                            .decode(String?.self)
                        {
                            values.append(value ?? "NULL")
                        }
                        return values
                    })
            } catch {
                return .failure(error)
            }
        }

        func names(as user: String) async throws -> [String] {
            try await run("SELECT name FROM strata_cloud.records WHERE owner = '\(alice)' ORDER BY name", as: user).get()
        }

        /// What alice's zone holds, read as alice.
        func alicesRecords() async throws -> [String] {
            try await run(
                "SELECT name || '=' || coalesce(fields->'title'->'text'->>'_0', '') FROM strata_cloud.records WHERE owner = '\(alice)' ORDER BY name",
                as: alice
            ).get()
        }
    }

    func refused(_ result: Result<[String], Error>) -> Bool {
        if case .failure = result { return true }
        return false
    }

    @Test func aStrangerReadsNothingOfAnotherUsersZones() async throws {
        let scene = try await Scene(bobsPermission: nil)
        defer { scene.fixture.stop() }
        let bob = scene.bob
        #expect(try await scene.names(as: bob) == [])
        for table in ["zones", "tombstones", "shares", "share_participants", "departures", "assets"] {
            #expect(try await scene.run("SELECT owner FROM strata_cloud.\(table) WHERE owner = '\(scene.alice)'", as: bob).get() == [])
        }
        #expect(try await scene.run("SELECT name FROM strata_cloud.users WHERE name = '\(scene.alice)'", as: bob).get() == [])
    }

    @Test func aStrangerWritesAndDeletesNothing() async throws {
        let scene = try await Scene(bobsPermission: nil)
        defer { scene.fixture.stop() }
        let (alice, bob) = (scene.alice, scene.bob)
        let before = try await scene.alicesRecords()
        // Updates and deletes find no row to touch; inserts are refused outright.
        #expect(
            try await scene.run("UPDATE strata_cloud.records SET fields = '{}' WHERE owner = '\(alice)' RETURNING name", as: bob).get()
                == [])
        #expect(try await scene.run("DELETE FROM strata_cloud.records WHERE owner = '\(alice)' RETURNING name", as: bob).get() == [])
        // The request role may not delete zone rows at all (deleting a zone marks it deleted).
        #expect(refused(await scene.run("DELETE FROM strata_cloud.zones WHERE owner = '\(alice)' RETURNING name", as: bob)))
        #expect(
            try await scene.run("UPDATE strata_cloud.zones SET sequence = 0 WHERE owner = '\(alice)' RETURNING name", as: bob).get() == [])
        #expect(
            refused(
                await scene.run(
                    """
                    INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, change_tag, sequence, size)
                    VALUES ('\(alice)', 'games', 'x', 'games', '{}', '{}', 't', 999, 0) RETURNING name
                    """, as: bob)))
        #expect(
            refused(
                await scene.run(
                    "INSERT INTO strata_cloud.zones (owner, name, database_change) VALUES ('\(alice)', 'mine', 0) RETURNING name", as: bob))
        )
        #expect(
            refused(
                await scene.run(
                    "INSERT INTO strata_cloud.share_participants VALUES ('\(alice)', 'games', 'g1', '\(bob)', 'privateUser', 'readWrite', 'accepted', 0, 9) RETURNING participant",
                    as: bob)))
        #expect(refused(await scene.run("SELECT strata_cloud.mark_database_change('\(alice)', ARRAY['games'])::text", as: bob)))
        // Accepting an unshared record through the function joins nothing.
        #expect(try await scene.run("SELECT strata_cloud.accept_share('\(alice)', 'games', 'g2')::text", as: bob).get() == ["NULL"])
        #expect(try await scene.alicesRecords() == before)
        // Through the API, the same.
        let bobsView = scene.fixture.store.privateDatabase(of: bob)
        let result = try await bobsView.modifyRecords(
            saving: [CloudRecord(id: CloudRecordID(name: "g2", zone: scene.zone), type: "games", changeTag: "t3")], deleting: [scene.game])
        #expect(result.saveResults.values.allSatisfy { if case .failure(.permissionFailure) = $0 { true } else { false } })
        await #expect(throws: CloudError.permissionFailure(nil)) { try await bobsView.deleteZones([scene.zone]) }
        await #expect(throws: CloudError.permissionFailure(nil)) {
            _ = try await bobsView.fetchZoneChanges(scene.zone, since: nil, limit: 10)
        }
        #expect(try await scene.alicesRecords() == before)
    }

    @Test func aParticipantReachesTheSharedRecordsOnly() async throws {
        let scene = try await Scene(bobsPermission: .readWrite)
        defer { scene.fixture.stop() }
        let (alice, bob) = (scene.alice, scene.bob)
        #expect(try await scene.names(as: bob) == ["g1", "p1"])
        #expect(
            try await scene.run(
                "UPDATE strata_cloud.records SET fields = '{}' WHERE owner = '\(alice)' AND name = 'g2' RETURNING name", as: bob
            ).get() == [])
        #expect(
            try await scene.run("DELETE FROM strata_cloud.records WHERE owner = '\(alice)' AND name = 'g2' RETURNING name", as: bob).get()
                == [])
        // Moving a shared record out of the share, into alice's private part, is refused.
        #expect(
            refused(
                await scene.run(
                    "UPDATE strata_cloud.records SET share_root = NULL WHERE owner = '\(alice)' AND name = 'p1' RETURNING name", as: bob)))
        // Raising their own permission or making themselves owner is not theirs to do.
        #expect(
            try await scene.run(
                "UPDATE strata_cloud.share_participants SET permission = 'readWrite', role = 'owner' WHERE owner = '\(alice)' RETURNING participant",
                as: bob
            ).get() == [])
        #expect(try await scene.alicesRecords() == ["g1=Poker", "g2=Secret", "p1="])
    }

    @Test func aReadOnlyParticipantWritesNothing() async throws {
        let scene = try await Scene(bobsPermission: .readOnly)
        defer { scene.fixture.stop() }
        let (alice, bob) = (scene.alice, scene.bob)
        let before = try await scene.alicesRecords()
        #expect(try await scene.names(as: bob) == ["g1", "p1"])
        #expect(
            try await scene.run("UPDATE strata_cloud.records SET fields = '{}' WHERE owner = '\(alice)' RETURNING name", as: bob).get()
                == [])
        #expect(try await scene.run("DELETE FROM strata_cloud.records WHERE owner = '\(alice)' RETURNING name", as: bob).get() == [])
        #expect(
            refused(
                await scene.run(
                    """
                    INSERT INTO strata_cloud.records (owner, zone, name, type, fields, field_versions, parent, change_tag, sequence, size, share_root)
                    VALUES ('\(alice)', 'games', 'p9', 'players', '{}', '{}', 'g1', 't', 999, 0, 'g1') RETURNING name
                    """, as: bob)))
        #expect(
            try await scene.run("UPDATE strata_cloud.zones SET sequence = 0 WHERE owner = '\(alice)' RETURNING name", as: bob).get() == [])
        let shared = scene.fixture.store.sharedDatabase(of: bob)
        let edit = CloudRecord(id: scene.game, type: "games", fields: ["title": .text("Mine")], changeTag: "t1")
        let result = try await shared.modifyRecords(saving: [edit], deleting: [])
        #expect(result.saveResults[scene.game].map { if case .failure(.permissionFailure) = $0 { true } else { false } } == true)
        #expect(try await scene.alicesRecords() == before)
    }

    @Test func aRemovedParticipantReadsNothingMore() async throws {
        let scene = try await Scene(bobsPermission: .readWrite)
        defer { scene.fixture.stop() }
        let alice = scene.fixture.store.privateDatabase(of: scene.alice)
        var share = try await alice.fetchShare(rootRecordID: scene.game)
        share.participants.removeAll { $0.user == scene.bob }
        _ = try await alice.saveShare(share)
        #expect(try await scene.names(as: scene.bob) == [])
        #expect(try await scene.run("SELECT root FROM strata_cloud.shares WHERE owner = '\(scene.alice)'", as: scene.bob).get() == [])
        await #expect(throws: CloudError.permissionFailure(nil)) {
            _ = try await scene.fixture.store.sharedDatabase(of: scene.bob).fetchZoneChanges(scene.zone, since: nil, limit: 10)
        }
    }

    @Test func namesThatLookLikeSQLAreOnlyData() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let evil = "x'); DROP TABLE strata_cloud.records; --"
        let user = fixture.user(evil)
        let database = fixture.store.privateDatabase(of: user)
        let zone = CloudZoneID(name: evil, owner: user)
        try await database.saveZones([zone])
        let record = CloudRecord(
            id: CloudRecordID(name: evil, zone: zone), type: "games\"; DELETE FROM strata_cloud.zones; --",
            fields: ["title'; --": .text(evil), "\"quoted\"": .integer(1)])
        let saved = try await database.modifyRecords(saving: [record], deleting: []).saveResults[record.id]?.get()
        let fetched = try await database.fetchZoneChanges(zone, since: nil, limit: 10).changed
        #expect(fetched == [try #require(saved)])
        #expect(fetched.first?.fields["title'; --"] == .text(evil))
        #expect(try await database.fetchDatabaseChanges(since: nil).changedZones == [zone])
        var share = CloudShare(rootRecordID: record.id, title: evil)
        share.participants.append(CloudShare.Participant(user: fixture.user("o'brien"), permission: .readOnly))
        _ = try await database.saveShare(share)
        let accepted = try await fixture.store.container(for: fixture.user("o'brien")).acceptShare(url: share.url)
        #expect(accepted.title == evil)
    }
}
