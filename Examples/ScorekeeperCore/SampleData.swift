import Foundation
import Strata

/// The games, players and scores of the preview database.
public enum SampleData {
    /// The sample games, with their players and scores.
    public static let games: [(title: String, players: [(name: String, score: Int)])] = [
        ("Family Game Night", [("Blob", 12), ("Blob Jr", 9), ("Blob Sr", 15), ("Blob Esq", 4)]),
        ("Weekly Poker Night", [("Brandon", 230), ("Stephen", 185), ("Ada", 310)]),
        ("Mahjong Club", [("Mei", 42), ("Hiro", 38)]),
        ("Solo Scrabble", [("Lin", 367)]),
    ]

    /// Seeds the sample games and players, each player with a generated avatar.
    ///
    /// IDs come from `@Dependency(\.uuid)` and timestamps from `@Dependency(\.date)`, so with a
    /// deterministic generator (as the preview mode and the tests set) every run seeds the same
    /// rows, and seeding again inserts nothing (see `Database.seed`).
    @discardableResult
    public static func seed(_ db: Database) throws -> SeedSummary {
        @Dependency(\.uuid) var uuid
        @Dependency(\.date.now) var now
        var games: [Game] = []
        var players: [Player] = []
        for (title, roster) in Self.games {
            let game = Game(id: uuid(), title: title, createdAt: now)
            games.append(game)
            for (name, score) in roster {
                // The avatar must be stored before the row that names it: the tracked column's
                // trigger rejects references to missing assets. Storing identical bytes again
                // only returns the existing asset.
                let avatar = try db.putAsset(Avatar.identicon(seed: name))
                players.append(Player(id: uuid(), gameID: game.id, name: name, score: score, avatar: avatar.id, createdAt: now))
            }
        }
        return try db.seed {
            games
            players
        }
    }
}
