import Foundation
import Strata

/// Finds the games and players that command-line arguments name. Names match without regard
/// to case; the schema keeps them unique (titles overall, player names within a game).
enum Lookup {
    static func game(_ db: Database, titled title: String) throws -> Game {
        if let game = try Game.titled(title).fetchOne(db) {
            return game
        }
        let known = try Game.byTitle.select(\.title).fetchAll(db)
        throw ScorekeeperError.noSuchGame(title, known: known)
    }

    /// The player called `name`, in `gameTitle` when given. Without a game, the name must be
    /// unique across games.
    static func player(_ db: Database, named name: String, inGame gameTitle: String?) throws -> (player: Player, game: Game) {
        if let gameTitle {
            let game = try Lookup.game(db, titled: gameTitle)
            guard let player = try Player.named(name, inGame: game.id).fetchOne(db)
            else { throw ScorekeeperError.noSuchPlayer(name, game: game.title) }
            return (player, game)
        }
        let matches =
            try Player
            .join(Game.all) { $0.gameID.eq($1.id) }
            .where { player, _ in player.name.collate("NOCASE").eq(name) }
            .fetchAll(db)
        switch matches.count {
        case 0:
            throw ScorekeeperError.noSuchPlayer(name, game: nil)
        case 1:
            return matches[0]
        default:
            throw ScorekeeperError.ambiguousPlayer(name, games: matches.map(\.1.title).sorted())
        }
    }

    static func validName(_ name: String) throws -> String {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw ScorekeeperError.emptyName }
        return trimmed
    }
}
