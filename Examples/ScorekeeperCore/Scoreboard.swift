import Foundation
import Strata

/// A game as the games list shows it.
public struct GameSummary: FetchableRecord, Sendable, Hashable {
    public var game: Game
    public var playerCount: Int
    /// The player with the highest score (ties: by name), nil in a game without players.
    public var leader: String?
    public var leaderScore: Int?

    public init(row: Row) throws {
        game = try Game(row: row)
        playerCount = try row.decode(at: 3)
        leader = try row.decode(at: 4)
        leaderScore = try row.decode(at: 5)
    }

    static let sql = """
        SELECT games.id, games.title, games.createdAt,
               (SELECT count(*) FROM players WHERE players.gameID = games.id),
               leader.name, leader.score
        FROM games
        LEFT JOIN players AS leader ON leader.id = (
            SELECT id FROM players WHERE players.gameID = games.id
            ORDER BY score DESC, name COLLATE NOCASE LIMIT 1)
        ORDER BY games.title COLLATE NOCASE
        """

    /// Every game, by title.
    public static func fetchAll(_ db: Database) throws -> [GameSummary] {
        try fetchAll(db, sql: sql)
    }
}

/// A player as a game's table shows it: the row, and the size of the avatar image.
public struct PlayerSummary: Sendable, Hashable {
    public var player: Player
    public var avatarSize: Int64?

    /// A game's players, best score first (ties: by name).
    public static func fetchAll(_ db: Database, gameID: Game.ID) throws -> [PlayerSummary] {
        let players = try Player.fetchAll(db, """
            SELECT id, gameID, name, score, avatar, createdAt FROM players
            WHERE gameID = \(gameID)
            ORDER BY score DESC, name COLLATE NOCASE
            """)
        return try players.map { player in
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
