import ArgumentParser
import Foundation
import ScorekeeperCore

struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share a game with another user (preview: Blob shares with Blob Jr).",
        discussion: """
            Blob, who has the sample games, shares GAME with Blob Jr through an in-memory \
            cloud, and prints the share URL and Blob's games with who each is shared with. \
            Pass the URL to `scorekeeper accept` to see Blob Jr's side.
            """)

    @Argument(help: "The game's title.") var game: String = "Weekly Poker Night"
    @Flag(help: "Let Blob Jr read the game, not edit it.") var readOnly = false

    func run() async throws {
        FileHandle.standardOutput.write(Data(try await SharingDemo(game: game).share(readOnly: readOnly).utf8))
    }
}

struct AcceptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept",
        abstract: "Accept a shared game as a second user (preview: Blob Jr accepts Blob's share).",
        discussion: """
            Blob shares the game the URL names (one `scorekeeper share` printed; without a URL, \
            Weekly Poker Night) read-only; Blob Jr accepts and the game appears on Blob Jr's \
            side, marked "Shared by Blob"; Blob Jr's rename is refused; then Blob lets Blob Jr \
            edit, and Blob Jr's changes reach Blob.
            """)

    @Argument(help: "A share URL printed by `scorekeeper share`.") var url: String?

    func run() async throws {
        FileHandle.standardOutput.write(Data(try await SharingDemo().accept(url: url).utf8))
    }
}
