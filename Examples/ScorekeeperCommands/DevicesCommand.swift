import ArgumentParser
import Foundation
import ScorekeeperCore

struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract:
            "Show two devices editing the same game apart and converging through sync: the later title wins, and points both gave one player both count.",
        discussion: """
            A phone and a laptop of one user, each with its own in-memory database, sync through \
            an in-memory cloud (MockCloud). The phone starts with the sample games; both then \
            rename the same game and change scores while apart; after syncing, both show the \
            same scoreboard. The sync log shows what each device sent, fetched and merged.
            """)

    func run() async throws {
        FileHandle.standardOutput.write(Data(try await DevicesDemo().run().utf8))
    }
}
