import Foundation
import Strata

/// "Shared with Blob Jr" on the owner's side, "Shared by Blob" on a participant's, nil for a
/// game that is not shared: computed in SQL from `SyncMetadata.share`.
@DatabaseFunction(as: ((JSONRepresentation<CloudShare>?) -> String?).self, isDeterministic: true)
func sharingLabel(_ share: CloudShare?) -> String? {
    guard let share else { return nil }
    if !share.isOwnedByCurrentUser { return "Shared by \(share.owner)" }
    let others = share.participants.filter { $0.role != .owner && $0.acceptance != .removed }
    guard !others.isEmpty else { return "Shared with nobody yet" }
    return "Shared with "
        + others.map { participant in
            participant.acceptance == .pending ? "\(participant.user) (invited)" : participant.user
        }.joined(separator: ", ")
}

/// A game with its sharing state: a temporary view over the games left-joined to the sync
/// engine's metadata, with ``sharingLabel(_:)`` formatting the share.
@Table("gameSharingRows")
public struct GameSharingRow: Sendable, Hashable {
    public var gameID: Game.ID
    public var title: String
    public var playerCount: Int
    public var isShared: Bool
    public var sharing: String?

    /// The view, by title:
    ///
    /// ```sql
    /// CREATE TEMPORARY VIEW "gameSharingRows" (…) AS
    /// SELECT "games"."id", "games"."title", (SELECT count(*) …), ifnull("metadata"."isShared", 0),
    ///        "sharingLabel"("metadata"."share")
    /// FROM "games" LEFT JOIN "strata_sync"."metadata" ON …
    /// ```
    static var view: TemporaryView<GameSharingRow> {
        GameSharingRow.createTemporaryView(
            ifNotExists: true,
            as: Game.byTitle.leftJoin(SyncMetadata.all) { game, metadata in game.syncMetadataID.eq(metadata.id) }
                .select { game, metadata in
                    (game.id, game.title, Player.inGame(game.id).count(), metadata.isShared.ifnull(false), $sharingLabel(metadata.share))
                })
    }

    /// Installs ``sharingLabel(_:)`` and the view on a connection that has the metadatabase
    /// attached (a sync engine's writer).
    public static func install(on db: Database) throws {
        try db.add(function: $sharingLabel)
        try view.execute(db)
    }
}

extension Rendering {
    /// The games with who they are shared with.
    public static func sharedGames(_ rows: [GameSharingRow]) -> String {
        var table = TextTable(
            columns: [.init("Game"), .init("Players", .right), .init("Sharing")],
            emptyMessage: "No games yet.")
        for row in rows {
            table.append([row.title, "\(row.playerCount)", row.sharing ?? "—"])
        }
        return "Games\n" + table.render()
    }
}
