import Foundation
import Strata

/// Scorekeeper's commands, on `@Dependency(\.defaultDatabase)`.
///
/// Reads return the text to print; writes make their change in one transaction and return a
/// confirmation followed by the table that changed, so the effect is visible in preview mode,
/// where nothing outlives the process.
public struct Scorekeeper: Sendable {
    @Dependency(\.defaultDatabase) var database
    @Dependency(\.uuid) var uuid
    @Dependency(\.date.now) var now

    public init() {}

    // MARK: Reading

    /// The games list, then every game's players.
    public func scoreboard() throws -> String {
        Rendering.scoreboard(try database.read { db in try ScoreboardRequest().fetch(db) })
    }

    /// The games, with their player counts and leaders.
    public func games() throws -> String {
        Rendering.games(try database.read { db in try GameSummary.fetchAll(db) })
    }

    /// One game's players, best score first.
    public func players(game title: String) throws -> String {
        try database.read { db in try playersTable(db, game: Lookup.game(db, titled: title)) }
    }

    // MARK: Games

    public func addGame(title: String) throws -> String {
        let title = try Lookup.validName(title)
        let game = Game(id: uuid(), title: title, createdAt: now)
        return try database.write { db in
            if try Game.titled(title).fetchOne(db) != nil {
                throw ScorekeeperError.duplicateGame(title)
            }
            try game.insert(db)
            return "Added the game \(title).\n\n" + Rendering.games(try GameSummary.fetchAll(db))
        }
    }

    public func renameGame(_ title: String, to newTitle: String) throws -> String {
        let newTitle = try Lookup.validName(newTitle)
        return try database.write { db in
            var game = try Lookup.game(db, titled: title)
            if let other = try Game.titled(newTitle).fetchOne(db),
                other.id != game.id
            {
                throw ScorekeeperError.duplicateGame(newTitle)
            }
            let oldTitle = game.title
            game.title = newTitle
            try game.update(db)
            return "Renamed \(oldTitle) to \(newTitle).\n\n" + Rendering.games(try GameSummary.fetchAll(db))
        }
    }

    /// Deletes a game; its players go with it (`ON DELETE CASCADE`), and their avatars with
    /// them (the tracked column's triggers).
    public func deleteGame(_ title: String) throws -> String {
        try database.write { db in
            let game = try Lookup.game(db, titled: title)
            let playerCount = try Player.inGame(game.id).fetchCount(db)
            try game.delete(db)
            let players = playerCount == 1 ? "1 player" : "\(playerCount) players"
            return "Deleted \(game.title) and its \(players).\n\n" + Rendering.games(try GameSummary.fetchAll(db))
        }
    }

    // MARK: Players

    public func addPlayer(_ name: String, toGame title: String) throws -> String {
        let name = try Lookup.validName(name)
        let id = uuid()
        let createdAt = now
        return try database.write { db in
            let game = try Lookup.game(db, titled: title)
            if try isTaken(db, name: name, in: game, except: nil) {
                throw ScorekeeperError.duplicatePlayer(name, game: game.title)
            }
            let avatar = try db.putAsset(Avatar.identicon(seed: name))
            try Player(id: id, gameID: game.id, name: name, avatar: avatar.id, createdAt: createdAt).insert(db)
            return "Added \(name) to \(game.title).\n\n" + (try playersTable(db, game: game))
        }
    }

    public func renamePlayer(_ name: String, to newName: String, game: String? = nil) throws -> String {
        let newName = try Lookup.validName(newName)
        return try database.write { db in
            var (player, game) = try Lookup.player(db, named: name, inGame: game)
            if try isTaken(db, name: newName, in: game, except: player.id) {
                throw ScorekeeperError.duplicatePlayer(newName, game: game.title)
            }
            let oldName = player.name
            player.name = newName
            try player.update(db)
            return "Renamed \(oldName) to \(newName).\n\n" + (try playersTable(db, game: game))
        }
    }

    public func deletePlayer(_ name: String, game: String? = nil) throws -> String {
        try database.write { db in
            let (player, game) = try Lookup.player(db, named: name, inGame: game)
            try player.delete(db)
            return "Removed \(player.name) from \(game.title).\n\n" + (try playersTable(db, game: game))
        }
    }

    /// Adds `delta` (negative to decrement) to a player's score.
    public func changeScore(of name: String, by delta: Int, game: String? = nil) throws -> String {
        try database.write { db in
            var (player, game) = try Lookup.player(db, named: name, inGame: game)
            let (score, overflow) = player.score.addingReportingOverflow(delta)
            guard !overflow else { throw ScorekeeperError.scoreOutOfRange(player: player.name, score: player.score, change: delta) }
            player.score = score
            try player.update(db)
            let change = delta >= 0 ? "+\(delta)" : "\(delta)"
            return "\(player.name): \(change), now \(player.score).\n\n" + (try playersTable(db, game: game))
        }
    }

    /// Stores an image file as the player's avatar; the previous one is released when no one
    /// else uses it.
    public func setAvatar(of name: String, contentsOf path: String, game: String? = nil) throws -> String {
        let data = try ImageFile.read(path)
        return try database.write { db in
            var (player, game) = try Lookup.player(db, named: name, inGame: game)
            let asset = try db.putAsset(data)
            player.avatar = asset.id
            try player.update(db)
            return "Set \(player.name)'s avatar (\(Rendering.byteCount(asset.size))).\n\n" + (try playersTable(db, game: game))
        }
    }

    // MARK: Helpers

    private func playersTable(_ db: Database, game: Game) throws -> String {
        Rendering.players(of: game, try PlayerSummary.fetchAll(db, gameID: game.id))
    }

    private func isTaken(_ db: Database, name: String, in game: Game, except id: Player.ID?) throws -> Bool {
        // `IS NOT`: with no `id` to except (NULL), every player counts.
        try Player.named(name, inGame: game.id).where { $0.id.isNot(id) }.fetchCount(db) > 0
    }
}
