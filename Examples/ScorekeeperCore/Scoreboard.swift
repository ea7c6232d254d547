import Foundation
import Strata

/// A game as the games list shows it.
@Selection
public struct GameSummary: Sendable, Hashable {
    public var game: Game
    public var playerCount: Int
    /// The player with the highest score (ties: by name), nil in a game without players.
    public var leader: String?
    public var leaderScore: Int?

    /// Every game by title, with its number of players and its leader: the first player of
    /// ``Player/ranked(inGame:)``, left-joined so a game without players still has a row.
    ///
    /// ```sql
    /// SELECT "games".…, (SELECT count(*) FROM "players" WHERE "players"."gameID" = "games"."id"),
    ///        "players"."name", "players"."score"
    /// FROM "games"
    /// LEFT JOIN "players" ON "players"."id" = (SELECT "players"."id" FROM "players"
    ///     WHERE "players"."gameID" = "games"."id" ORDER BY … LIMIT 1)
    /// ORDER BY "games"."title" COLLATE "NOCASE"
    /// ```
    ///
    /// The builder has no table aliases, so the joined leader and the subqueries all say
    /// `"players"`: inside a subquery that name is the subquery's own `FROM "players"` (SQL
    /// resolves a name in the innermost query first), while `"games"` is the outer row.
    static var all: Select<GameSummary, Game, Player?> {
        let withLeader = Game.byTitle.leftJoin(Player.all) { game, leader in
            leader.id.eq(Player.ranked(inGame: game.id).select(\.id).limit(1))
        }
        return withLeader.select { game, leader in
            GameSummary.Columns(
                game: game,
                playerCount: Player.inGame(game.id).count(),
                leader: leader.name,
                leaderScore: leader.score)
        }
    }

    /// Every game, by title.
    public static func fetchAll(_ db: Database) throws -> [GameSummary] {
        try all.fetchAll(db)
    }
}

/// A player as a game's table shows it: the row, and the size of the avatar image.
public struct PlayerSummary: Sendable, Hashable {
    public var player: Player
    public var avatarSize: Int64?

    /// A game's players, best score first (ties: by name).
    public static func fetchAll(_ db: Database, gameID: Game.ID) throws -> [PlayerSummary] {
        try Player.ranked(inGame: gameID).fetchAll(db).map { player in
            let size = try player.avatar.flatMap { try db.assetDescriptor($0) }?.size
            return PlayerSummary(player: player, avatarSize: size)
        }
    }
}

/// Everything the default listing and `watch` show: the games, then each game's players.
public struct Scoreboard: Sendable, Hashable {
    public struct Section: Sendable, Hashable {
        public var summary: GameSummary
        public var players: [PlayerSummary]
    }

    public var sections: [Section] = []

    public init(sections: [Section] = []) {
        self.sections = sections
    }

    public var games: [GameSummary] { sections.map(\.summary) }
}

/// Reads the ``Scoreboard`` in one transaction, so the games list and the players tables agree.
public struct ScoreboardRequest: FetchKeyRequest {
    public init() {}

    public func fetch(_ db: Database) throws -> Scoreboard {
        let sections = try GameSummary.fetchAll(db).map { summary in
            Scoreboard.Section(summary: summary, players: try PlayerSummary.fetchAll(db, gameID: summary.game.id))
        }
        return Scoreboard(sections: sections)
    }
}
