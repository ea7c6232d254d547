import ArgumentParser
import ScorekeeperCore

struct AddGame: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Add a game.")

    @Argument(help: "The new game's title.") var title: String
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.addGame(title: title) }
}

struct RenameGame: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Rename a game.")

    @Argument(help: "The game's current title.") var game: String
    @Argument(help: "Its new title.") var newTitle: String
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.renameGame(game, to: newTitle) }
}

struct DeleteGame: ScorekeeperSubcommand {
    static let configuration = CommandConfiguration(abstract: "Delete a game with all its players.")

    @Argument(help: "The game's title.") var game: String
    @OptionGroup var options: DatabaseOptions

    func body(_ keeper: Scorekeeper) throws -> String { try keeper.deleteGame(game) }
}
