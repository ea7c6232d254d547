import Foundation
import Strata

/// A player of one game, with a score and an optional avatar image (an asset).
@Table("players")
public struct Player: Identifiable, Sendable, Hashable {
    public var id: UUID
    public var gameID: Game.ID
    public var name: String
    public var score: Int
    /// The avatar's content address in the asset store; the players table tracks the column,
    /// so deleting the player (or its game) releases the image.
    public var avatar: AssetID?
    public var createdAt: Date

    public init(id: UUID, gameID: Game.ID, name: String, score: Int = 0, avatar: AssetID? = nil, createdAt: Date) {
        self.id = id
        self.gameID = gameID
        self.name = name
        self.score = score
        self.avatar = avatar
        self.createdAt = createdAt
    }
}

extension Player {
    /// The players of a game: `gameID` is a value, or a column of an outer query (a correlated
    /// subquery).
    static func inGame(_ gameID: some QueryExpression<Game.ID>) -> Select<Player, Player, ()> {
        Player.where { $0.gameID.eq(gameID) }
    }

    /// A game's players, best score first (ties: by name, ignoring case).
    static func ranked(inGame gameID: some QueryExpression<Game.ID>) -> Select<Player, Player, ()> {
        inGame(gameID).order { ($0.score.desc(), $0.name.collate("NOCASE")) }
    }

    /// The player called `name` in a game, ignoring case as the unique index
    /// `players_game_name` does.
    static func named(_ name: String, inGame gameID: Game.ID) -> Select<Player, Player, ()> {
        inGame(gameID).where { $0.name.collate("NOCASE").eq(name) }
    }
}
