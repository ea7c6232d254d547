import Foundation
import PostgresNIO
import StrataCloud
import StrataCloudStore
import Testing

/// The request role can do exactly what the API needs (issue #25, finding 7): a read-write
/// participant moves a shared zone's position forward and nothing else of the zone row; only
/// users of a zone announce its changes; privileges the API never uses are gone.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct CloudStoreRequestRoleTests {
    typealias Scene = CloudStoreIsolationTests.Scene

    func refused(_ result: Result<[String], Error>) -> Bool {
        if case .failure = result { return true }
        return false
    }

    @Test func aReadWriteParticipantCannotDeleteOrRewindTheOwnersZone() async throws {
        let scene = try await Scene(bobsPermission: .readWrite)
        defer { scene.fixture.stop() }
        let (alice, bob, zone) = (scene.alice, scene.bob, scene.zone.name)
        let row = "owner = '\(alice)' AND name = '\(zone)'"
        #expect(refused(await scene.run("UPDATE strata_cloud.zones SET deleted = true WHERE \(row) RETURNING name", as: bob)))
        #expect(refused(await scene.run("UPDATE strata_cloud.zones SET horizon = sequence + 100 WHERE \(row) RETURNING name", as: bob)))
        #expect(refused(await scene.run("UPDATE strata_cloud.zones SET sequence = 0 WHERE \(row) RETURNING name", as: bob)))
        #expect(refused(await scene.run("UPDATE strata_cloud.zones SET database_change = 0 WHERE \(row) RETURNING name", as: bob)))
        #expect(
            try await scene.run("SELECT deleted::text || '/' || horizon::text FROM strata_cloud.zones WHERE \(row)", as: alice).get() == [
                "false/0"
            ])
        // What the API needs still works: the participant's save moves the position forward.
        let saved = try await scene.fixture.store.sharedDatabase(of: bob).modifyRecords(
            saving: [CloudRecord(id: CloudRecordID(name: "p2", zone: scene.zone), type: "players", parent: scene.game)], deleting: [])
        #expect(saved.saveResults.values.allSatisfy { (try? $0.get()) != nil })
    }

    @Test func onlyAZonesUsersAnnounceItsChanges() async throws {
        let stranger = try await Scene(bobsPermission: nil)
        defer { stranger.fixture.stop() }
        let call = "SELECT strata_cloud.notify_zone_change('\(stranger.alice)', '\(stranger.zone.name)', '{}')::text"
        #expect(refused(await stranger.run(call, as: stranger.bob)))
        #expect(try await stranger.run(call, as: stranger.alice).get() == [""])

        let participant = try await Scene(bobsPermission: .readWrite)
        defer { participant.fixture.stop() }
        let (alice, bob, zone) = (participant.alice, participant.bob, participant.zone.name)
        #expect(
            try await participant.run("SELECT strata_cloud.notify_zone_change('\(alice)', '\(zone)', ARRAY['\(bob)'])::text", as: bob).get()
                == [""])
        #expect(
            refused(await participant.run("SELECT strata_cloud.notify_zone_change('\(alice)', '\(zone)', ARRAY['carol'])::text", as: bob)))
    }

    @Test func privilegesTheAPINeverUsesAreRevoked() async throws {
        let scene = try await Scene(bobsPermission: nil)
        defer { scene.fixture.stop() }
        let role = CloudStore.requestRole
        let checks = [
            ("strata_cloud.users", "UPDATE"), ("strata_cloud.users", "DELETE"), ("strata_cloud.zones", "DELETE"),
            ("strata_cloud.assets", "UPDATE"), ("strata_cloud.assets", "DELETE"), ("strata_cloud.asset_chunks", "DELETE"),
            ("strata_cloud.records", "TRUNCATE"),
        ]
        for (table, privilege) in checks {
            let held = try await scene.run("SELECT has_table_privilege('\(role)', '\(table)', '\(privilege)')::text", as: scene.alice).get()
            #expect(held == ["false"], "\(role) holds \(privilege) on \(table)")
        }
        // A user's byte count moves only through use_bytes, which checks its caller.
        #expect(refused(await scene.run("UPDATE strata_cloud.users SET used_bytes = 0 RETURNING name", as: scene.alice)))
    }

    /// Everyone reads every public key; a user writes only their own row, and nobody deletes.
    @Test func aUserWritesOnlyTheirOwnPublicKey() async throws {
        let scene = try await Scene(bobsPermission: nil)
        defer { scene.fixture.stop() }
        let (alice, bob) = (scene.alice, scene.bob)
        try await scene.fixture.store.container(for: bob).publishPublicKey(Data(repeating: 2, count: 32))
        let key = "decode(repeat('01', 32), 'hex')"
        #expect(
            refused(
                await scene.run("INSERT INTO strata_cloud.public_keys (owner, key) VALUES ('\(bob)', \(key)) RETURNING owner", as: alice)))
        // Bob's row is invisible to an update as alice: nothing changes.
        #expect(
            try await scene.run("UPDATE strata_cloud.public_keys SET key = \(key) WHERE owner = '\(bob)' RETURNING owner", as: alice).get()
                == [])
        #expect(
            refused(
                await scene.run("UPDATE strata_cloud.public_keys SET owner = '\(alice)' WHERE owner = '\(bob)' RETURNING owner", as: bob)))
        #expect(refused(await scene.run("DELETE FROM strata_cloud.public_keys WHERE owner = '\(bob)' RETURNING owner", as: bob)))
        #expect(
            refused(
                await scene.run("INSERT INTO strata_cloud.public_keys (owner, key) VALUES ('\(alice)', '\\x01') RETURNING owner", as: alice)
            ))
        #expect(
            try await scene.run("INSERT INTO strata_cloud.public_keys (owner, key) VALUES ('\(alice)', \(key)) RETURNING owner", as: alice)
                .get() == [alice])
        let keys = try await scene.fixture.store.container(for: alice).publicKeys(of: [alice, bob])
        #expect(keys == [alice: Data(repeating: 1, count: 32), bob: Data(repeating: 2, count: 32)])
    }
}
