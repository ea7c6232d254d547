import Foundation
import Strata

/// Finds the games and players that command-line arguments name. Names match without regard
/// to case; the schema keeps them unique (titles overall, player names within a game).
enum Lookup {
    static func game(_ db: Database, titled title: String) throws -> Game {
        if let game = try Game.fetchOne(db, "SELECT id, title, createdAt FROM games WHERE title = \(title) COLLATE NOCASE") {
            return game
        }
        let known = try String.fetchAll(db, sql: "SELECT title FROM games ORDER BY title COLLATE NOCASE")
        throw ScorekeeperError.noSuchGame(title, known: known)
    }

    /// The player called `name`, in `gameTitle` when given. Without a game, the name must be
    /// unique across games.
    static func player(_ db: Database, named name: String, inGame gameTitle: String?) throws -> (player: Player, game: Game) {
        if let gameTitle {
            let game = try Lookup.game(db, titled: gameTitle)
            guard let player = try Player.fetchOne(db, """
                SELECT id, gameID, name, score, avatar, createdAt FROM players
                WHERE gameID = \(game.id) AND name = \(name) COLLATE NOCASE
                """)
            else { throw ScorekeeperError.noSuchPlayer(name, game: game.title) }
            return (player, game)
        }
        let players = try Player.fetchAll(db, """
            SELECT id, gameID, name, score, avatar, createdAt FROM players
            WHERE name = \(name) COLLATE NOCASE
            """)
        switch players.count {
        case 0:
            throw ScorekeeperError.noSuchPlayer(name, game: nil)
        case 1:
            return (players[0], try Game.find(db, id: players[0].gameID))
        default:
            let titles = try players.map { try Game.find(db, id: $0.gameID).title }.sorted()
            throw ScorekeeperError.ambiguousPlayer(name, games: titles)
        }
    }

    static func validName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ScorekeeperError.emptyName }
        return trimmed
    }
}
