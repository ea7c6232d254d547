import Foundation
import PostgresNIO
import StrataCloud
import StrataCloudStore
import Testing

/// Row-level security of users' profiles, straight against PostgreSQL: a user writes only
/// their own, and reads their own and those of the users on a share with them, nobody else's.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct CloudStoreProfileTests {
    typealias Scene = CloudStoreIsolationTests.Scene

    func refused(_ result: Result<[String], Error>) -> Bool {
        if case .failure = result { return true }
        return false
    }

    /// Alice shares with bob (accepted) and has invited dave (pending); carol shares nothing.
    func scene() async throws -> (Scene, carol: String, dave: String) {
        let scene = try await Scene(bobsPermission: .readOnly)
        let (carol, dave) = (scene.fixture.user("carol"), scene.fixture.user("dave"))
        let store = scene.fixture.store
        var share = try await store.privateDatabase(of: scene.alice).fetchShare(rootRecordID: scene.game)
        share.participants.append(CloudShare.Participant(user: dave, permission: .readOnly))
        _ = try await store.privateDatabase(of: scene.alice).saveShare(share)
        for (user, name) in [(scene.alice, "Alice"), (scene.bob, "Bob"), (carol, "Carol"), (dave, "Dave")] {
            try await store.container(for: user).setUserProfile(CloudUserProfile(displayName: name, email: "\(name)@example.com"))
        }
        return (scene, carol, dave)
    }

    func visible(to user: String, in scene: Scene) async throws -> [String] {
        try await scene.run("SELECT display_name FROM strata_cloud.user_profiles ORDER BY display_name", as: user).get()
    }

    @Test func aUserReadsTheirOwnProfileAndTheirSharePeersOnly() async throws {
        let (scene, carol, dave) = try await scene()
        defer { scene.fixture.stop() }
        // Dave is invited, not joined: nobody else reads his profile yet, not even the owner
        // who typed his id in. He reads the owner's, who chose him, and those who joined.
        #expect(try await visible(to: scene.alice, in: scene) == ["Alice", "Bob"])
        #expect(try await visible(to: scene.bob, in: scene) == ["Alice", "Bob"])
        #expect(try await visible(to: dave, in: scene) == ["Alice", "Bob", "Dave"])
        // Carol shares nothing with any of them: her own row, and no other, even by name.
        #expect(try await visible(to: carol, in: scene) == ["Carol"])
        let byName = "SELECT email FROM strata_cloud.user_profiles WHERE owner = '\(scene.alice)'"
        #expect(try await scene.run(byName, as: carol).get() == [])
        #expect(try await scene.run(byName, as: scene.bob).get() == ["Alice@example.com"])
        // Nor through the helper: it lists the caller's peers, whoever asks.
        let peers = try await scene.run("SELECT strata_cloud.profile_peers()", as: carol).get()
        #expect(!peers.contains(scene.alice))
    }

    @Test func aUserWritesOnlyTheirOwnProfile() async throws {
        let (scene, carol, _) = try await scene()
        defer { scene.fixture.stop() }
        let alice = scene.alice
        // Bob can read alice's row, and still not change it: the update matches no row.
        #expect(
            try await scene.run(
                "UPDATE strata_cloud.user_profiles SET display_name = 'Mallory' WHERE owner = '\(alice)' RETURNING owner", as: scene.bob
            ).get() == [])
        #expect(
            refused(
                await scene.run(
                    "INSERT INTO strata_cloud.user_profiles (owner, display_name) VALUES ('\(carol)-twin', 'Twin') RETURNING owner",
                    as: carol)))
        #expect(
            refused(
                await scene.run(
                    """
                    INSERT INTO strata_cloud.user_profiles (owner, display_name) VALUES ('\(alice)', 'Mallory')
                    ON CONFLICT (owner) DO UPDATE SET display_name = excluded.display_name RETURNING owner
                    """, as: carol)))
        #expect(refused(await scene.run("DELETE FROM strata_cloud.user_profiles WHERE owner = '\(alice)' RETURNING owner", as: alice)))
        #expect(try await scene.fixture.store.container(for: alice).userProfile()?.displayName == "Alice")
        // Bounds hold in the table too, whoever writes.
        #expect(
            refused(
                await scene.run(
                    "UPDATE strata_cloud.user_profiles SET display_name = '' WHERE owner = '\(carol)' RETURNING owner", as: carol)))
    }

    @Test func sharesTheStoreReturnsNameEveryParticipantTheCallerMayRead() async throws {
        let (scene, _, dave) = try await scene()
        defer { scene.fixture.stop() }
        let share = try await scene.fixture.store.sharedDatabase(of: scene.bob).fetchShare(rootRecordID: scene.game)
        #expect(share.participant(scene.alice)?.displayName == "Alice")
        #expect(share.participant(scene.bob)?.email == "Bob@example.com")
        #expect(share.participant(dave)?.displayName == nil)
    }
}
