import ArgumentParser
import Foundation
import ScorekeeperCore

struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print the scoreboard, and again whenever the data changes.",
        discussion: """
            In preview mode, a second task plays a few scripted changes (scores, a new player, \
            a rename) a second apart, and the scoreboard is reprinted after each, then the \
            command ends. With --database PATH it runs until interrupted (Ctrl-C), reprinting \
            whenever another scorekeeper process changes the file.
            """)

    @OptionGroup var options: DatabaseOptions

    func run() async throws {
        try options.bootstrap()
        // Written straight to the file descriptor: `print` buffers when stdout is a pipe, and
        // a frame should appear when it is printed.
        let output: @Sendable (String) -> Void = { text in
            FileHandle.standardOutput.write(Data(text.utf8))
        }
        if options.isPreview {
            try await Watch().run(script: WatchStep.previewScript, output: output)
            output("Preview finished. Run `scorekeeper watch --database PATH` to watch a file that other commands change.")
            output(try await options.previewSyncFootnote() + "\n")
        } else {
            try await options.syncWithCloud()
            let source = options.cloud.map { " and \($0)" } ?? ""
            output("Watching \(options.database ?? "")\(source). Change it from another terminal; press Ctrl-C to stop.\n\n")
            try await Watch().run(output: output)
        }
    }
}
