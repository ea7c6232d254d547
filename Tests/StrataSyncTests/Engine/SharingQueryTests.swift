import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

@DatabaseFunction(as: ((JSONRepresentation<CloudShare>?) -> Bool).self, isDeterministic: true)
func isOwner(of share: CloudShare?) -> Bool {
    share?.isOwnedByCurrentUser ?? true
}

/// A game with its sharing state, as a temporary view over the games and their metadata.
@Table struct GameSharingRow: Equatable {
    let id: String
    let title: String
    let isShared: Bool
    let isOwner: Bool
    let participants: Int
}

/// The share metadata through plain SQL: a temporary view joining games to `SyncMetadata`,
/// a Swift function over the share's JSON, and the share's current user.
@Suite(.timeLimit(.minutes(5))) struct SharingQueryTests {
    let cloud = MockCloud()
    let time = ManualWallClock()
    let alice: SyncTestDevice
    let bob: SyncTestDevice

    init() async throws {
        alice = try await SyncTestDevice("a", cloud: cloud, user: "alice", time: time)
        bob = try await SyncTestDevice("b", cloud: cloud, user: "bob", time: time)
        alice.engine.start()
        bob.engine.start()
    }

    static let view = GameSharingRow.createTemporaryView(
        as: SharedGame.leftJoin(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }
            .order { game, _ in game.id }
            .select { game, metadata in
                (
                    game.id, game.title, metadata.isShared.ifnull(false), $isOwner(of: metadata.share),
                    #sql("coalesce(json_array_length(\(metadata.share), '$.participants'), 1) - 1", as: Int.self)
                )
            })

    func sharingRows(_ device: SyncTestDevice) async throws -> [GameSharingRow] {
        try await device.engine.database.writeWithoutTransaction { db in
            try db.add(function: $isOwner)
            try Self.view.execute(db)
            defer { _ = try? Self.view.drop().execute(db) }
            return try GameSharingRow.all.fetchAll(db)
        }
    }

    @Test func aTemporaryViewShowsWhichGamesAreSharedAndWhoOwnsThem() async throws {
        try await alice.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess')")
        try await alice.engine.sendChanges()
        let shared = try await alice.engine.share(record: SharedGame(id: "g1")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
        }
        #expect(shared.share.isOwnedByCurrentUser)
        #expect(shared.share.currentUserParticipant?.role == .owner)
        try await bob.engine.acceptShare(url: shared.url)

        #expect(
            try await sharingRows(alice) == [
                GameSharingRow(id: "g1", title: "Poker", isShared: true, isOwner: true, participants: 1),
                GameSharingRow(id: "g2", title: "Chess", isShared: false, isOwner: true, participants: 0),
            ])
        #expect(
            try await sharingRows(bob) == [
                GameSharingRow(id: "g1", title: "Poker", isShared: true, isOwner: false, participants: 1)
            ])
        let bobsShare = try await bob.engine.database.write { db in
            try SyncMetadata.find(SharedGame(id: "g1").syncMetadataID).fetchOne(db)
        }
        #expect(
            bobsShare?.share?.currentUserParticipant == CloudShare.Participant(user: "bob", permission: .readWrite, acceptance: .accepted))
        #expect(bobsShare?.isOwnedByCurrentUser == false)
        let owned = try await bob.engine.database.write { db in
            try SyncMetadata.where { $0.isOwnedByCurrentUser }.fetchCount(db)
        }
        #expect(owned == 0)
    }
}
