import ArgumentParser
import DependenciesTestSupport
import Foundation
import ScorekeeperCore
import Strata
import StrataTestSupport
import Testing

@testable import ScorekeeperCommands

@Suite(
    "The scorekeeper command line", .timeLimit(.minutes(5)),
    .dependencies {
        $0.uuid = .incrementing
        $0.date = .constant(Date(timeIntervalSince1970: 1_767_258_000))
    })
struct CLITests {
    /// Parses `arguments` as the executable does and runs the command's body live on `path`.
    private func run(_ arguments: [String], on path: String) throws -> String {
        let command = try ScorekeeperCommand.parseAsRoot(arguments + ["--database", path])
        let subcommand = try #require(command as? any ScorekeeperSubcommand)
        #expect(subcommand.options.database == path)
        return try live(path) { try subcommand.body(Scorekeeper()) }
    }

    @Test("every command parses and runs against a temporary file")
    func commands() throws {
        let directory = try TemporaryDirectory(prefix: "scorekeeper-tests")
        defer { directory.remove() }
        let databasePath = directory.path("scores.sqlite")
        let image = directory.url.appendingPathComponent("avatar.bmp")
        try Avatar.identicon(seed: "image").write(to: image)

        #expect(try run(["add-game", "Game night"], on: databasePath).hasPrefix("Added the game Game night."))
        #expect(try run(["add-player", "Game night", "Blob"], on: databasePath).hasPrefix("Added Blob to Game night."))
        #expect(try run(["add-player", "Game night", "Blob Jr"], on: databasePath).contains("2 players"))
        #expect(try run(["increment", "Blob", "--by", "3"], on: databasePath).hasPrefix("Blob: +3, now 3."))
        #expect(try run(["increment", "Blob"], on: databasePath).hasPrefix("Blob: +1, now 4."))
        #expect(try run(["decrement", "Blob Jr", "--game", "Game night"], on: databasePath).hasPrefix("Blob Jr: -1, now -1."))
        #expect(try run(["rename-player", "Blob Jr", "Junior"], on: databasePath).hasPrefix("Renamed Blob Jr to Junior."))
        #expect(try run(["set-avatar", "Junior", image.path], on: databasePath).hasPrefix("Set Junior's avatar (246 B)."))
        #expect(try run(["rename-game", "Game night", "Games night"], on: databasePath).hasPrefix("Renamed Game night to Games night."))
        #expect(try run(["players", "Games night"], on: databasePath).contains("1  Blob"))
        #expect(try run(["games"], on: databasePath).contains("Games night        2  Blob (4)"))
        #expect(try run(["delete-player", "Junior"], on: databasePath).hasPrefix("Removed Junior from Games night."))
        #expect(try run(["show"], on: databasePath).contains("Games night — 1 player"))
        #expect(try run(["delete-game", "Games night"], on: databasePath).hasPrefix("Deleted Games night and its 1 player."))
    }

    @Test("no arguments: the default command, in preview mode")
    func defaultCommand() throws {
        let command = try ScorekeeperCommand.parseAsRoot([])
        let show = try #require(command as? Show)
        #expect(show.options.isPreview)
        #expect(show.options.changeFootnote.isEmpty == false)
        let text = try withDependencies {
            $0.context = .preview
            try $0.bootstrapDatabase(path: "cli-tests-\(UUID().uuidString)")
        } operation: {
            try show.body(Scorekeeper())
        }
        #expect(text.hasPrefix("Scorekeeper — preview mode"))
        #expect(text.contains("Weekly Poker Night — 3 players"))
    }

    @Test("--help lists every command")
    func help() {
        let help = ScorekeeperCommand.helpMessage(columns: 100)
        for name in [
            "show", "games", "players", "add-game", "rename-game", "delete-game", "add-player", "rename-player",
            "delete-player", "increment", "decrement", "set-avatar", "watch",
        ] {
            #expect(help.contains("  \(name)"), "\(name) is missing from --help")
        }
        #expect(help.contains("--database PATH"))
    }
}
