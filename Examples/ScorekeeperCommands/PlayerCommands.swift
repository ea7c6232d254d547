import ArgumentParser
import ScorekeeperCore

/// `--game TITLE`, for player names used in several games.
struct GameOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The player's game, when the name is used in several.", valueName: "title"))
    var game: String?
}

struct AddPlayer: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Add a player to a game, with a generated avatar and a score of 0.")

    @Argument(help: "The game's title.") var game: String
    @Argument(help: "The new player's name.") var name: String
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.addPlayer(name, toGame: game) }
}

struct RenamePlayer: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Rename a player.")

    @Argument(help: "The player's current name.") var player: String
    @Argument(help: "The new name.") var newName: String
    @OptionGroup var game: GameOption
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.renamePlayer(player, to: newName, game: game.game) }
}

struct DeletePlayer: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Remove a player from their game.")

    @Argument(help: "The player's name.") var player: String
    @OptionGroup var game: GameOption
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.deletePlayer(player, game: game.game) }
}

struct Increment: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Add points to a player's score.")

    @Argument(help: "The player's name.") var player: String
    // `.unconditional`: `--by -5` takes -5 as the value, not as an unknown option.
    @Option(parsing: .unconditional, help: ArgumentHelp("How many points (negative takes points off).", valueName: "points"))
    var by: Int = 1
    @OptionGroup var game: GameOption
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.changeScore(of: player, by: by, game: game.game) }
}

struct Decrement: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Take points off a player's score.")

    @Argument(help: "The player's name.") var player: String
    @Option(parsing: .unconditional, help: ArgumentHelp("How many points (negative adds points).", valueName: "points"))
    var by: Int = 1
    @OptionGroup var game: GameOption
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String {
        // -Int.min does not exist: the score could not take it anyway.
        let (delta, overflow) = by.multipliedReportingOverflow(by: -1)
        guard !overflow else { throw ValidationError("--by \(by) is out of range.") }
        return try keeper.changeScore(of: player, by: delta, game: game.game)
    }
}

struct SetAvatar: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(
        abstract: "Store an image file as a player's avatar.",
        discussion:
            "The image is stored in the database with StrataAssets: compressed, checksummed, and shared with any player using the same bytes."
    )

    @Argument(help: "The player's name.") var player: String
    @Argument(help: "The image file.", completion: .file()) var file: String
    @OptionGroup var game: GameOption
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.setAvatar(of: player, contentsOf: file, game: game.game) }
}
