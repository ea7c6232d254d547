import ArgumentParser
import Foundation
import ScorekeeperCore

struct ShareCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "share",
        abstract: "Share a game with another user (preview: Blob shares with Blob Jr).",
        discussion: """
            Preview: Blob, who has the sample games, shares GAME with Blob Jr through an \
            in-memory cloud, and prints the share URL and Blob's games with who each is shared \
            with. Pass the URL to `scorekeeper accept` to see Blob Jr's side.

            Live (scorekeeper-live with --database and --cloud): shares GAME of your file with \
            the user --with names, and prints the URL to hand them; they run \
            `scorekeeper-live accept URL` with their own --database and token.
            """)

    @Argument(help: "The game's title.") var game: String = "Weekly Poker Night"
    @Flag(help: "Let the other user read the game, not edit it.") var readOnly = false
    @Option(help: ArgumentHelp("Live: the user to share with (their name in the cloud).", valueName: "user")) var with: String?
    @OptionGroup var options: DatabaseOptions

    func validate() throws {
        guard !options.isPreview else { return }
        guard options.cloud != nil else {
            throw ValidationError("share with --database needs --cloud URL: sharing goes through the cloud.")
        }
        guard let with, !with.isEmpty else { throw ValidationError("share with --cloud needs --with USER: who to share the game with.") }
    }

    func run() async throws {
        guard !options.isPreview, let with else {
            FileHandle.standardOutput.write(Data(try await SharingDemo(game: game).share(readOnly: readOnly).utf8))
            return
        }
        try options.bootstrap()
        // The game must be in the cloud before it can be shared.
        if let problem = await options.syncWithCloud() { FileHandle.standardError.write(Data((problem + "\n").utf8)) }
        print(try await LiveSharing.share(game: game, with: with, readOnly: readOnly))
    }
}

struct AcceptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "accept",
        abstract: "Accept a shared game as a second user (preview: Blob Jr accepts Blob's share).",
        discussion: """
            Preview: Blob shares the game the URL names (one `scorekeeper share` printed; \
            without a URL, Weekly Poker Night) read-only; Blob Jr accepts and the game appears \
            on Blob Jr's side, marked "Shared by Blob"; Blob Jr's rename is refused; then Blob \
            lets Blob Jr edit, and Blob Jr's changes reach Blob.

            Live (scorekeeper-live with --database and --cloud): accepts the share URL as the \
            user of your token, and lists your games with the shared one.
            """)

    @Argument(help: "A share URL printed by `scorekeeper share`.") var url: String?
    @OptionGroup var options: DatabaseOptions

    func validate() throws {
        guard !options.isPreview else { return }
        guard options.cloud != nil else { throw ValidationError("accept with --database needs --cloud URL: the share is in the cloud.") }
        guard url != nil else { throw ValidationError("accept with --cloud needs the share URL `scorekeeper-live share` printed.") }
    }

    func run() async throws {
        guard !options.isPreview, let url else {
            FileHandle.standardOutput.write(Data(try await SharingDemo().accept(url: url).utf8))
            return
        }
        try options.bootstrap()
        print(try await LiveSharing.accept(url: url))
        if let problem = await options.syncWithCloud() { FileHandle.standardError.write(Data((problem + "\n").utf8)) }
    }
}
