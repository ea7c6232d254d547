import ArgumentParser
import ScorekeeperCore

struct Show: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Print every game, then each game's players by score.")

    @OptionGroup var options: DatabaseOptions
    var isChange: Bool { false }

    func body(_ keeper: Scorekeeper) throws -> String {
        let banner =
            options.isPreview
            ? "Scorekeeper — preview mode: a seeded in-memory database; nothing is saved.\nTry `scorekeeper --help` for the commands, and --database PATH to keep your data.\n\n"
            : ""
        return banner + (try keeper.scoreboard())
    }
}

struct Games: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "List the games, with their number of players and leader.")

    @OptionGroup var options: DatabaseOptions
    var isChange: Bool { false }

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.games() }
}

struct Players: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "List a game's players, best score first.")

    @Argument(help: "The game's title.") var game: String
    @OptionGroup var options: DatabaseOptions
    var isChange: Bool { false }

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.players(game: game) }
}
