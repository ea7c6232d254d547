import ArgumentParser
import Foundation
import ScorekeeperCore
import Strata

/// `--database PATH`, shared by every command, and the bootstrap it decides.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Run live on this SQLite file (created if missing), keeping data between runs. Without it: preview mode, on a seeded in-memory database.",
            valueName: "path"))
    var database: String?

    var isPreview: Bool { database == nil }

    /// The preview's clock time: fixed, so preview output and IDs are the same every run.
    static let previewDate = Date(timeIntervalSince1970: 1_767_258_000)

    /// Sets up the dependencies once for the process, as an app's entry point does.
    func bootstrap() throws {
        try prepareDependencies {
            if isPreview {
                $0.context = .preview
                $0.uuid = .incrementing
                $0.date = .constant(Self.previewDate)
            } else {
                $0.context = .live
            }
            try $0.bootstrapDatabase(path: database)
            if isPreview { try $0.bootstrapSyncEngine() }
        }
    }

    /// In preview mode, syncs once with the preview's mock cloud and says what it holds.
    func previewSyncFootnote() async throws -> String {
        guard isPreview else { return "" }
        return "\n\n" + (try await Scorekeeper().previewSyncSummary())
    }

    /// Printed after a change in preview mode, where it will not survive the process.
    var changeFootnote: String {
        isPreview
            ? "\n\n(Preview mode: this change lasts until the program exits. Add --database PATH to keep it.)"
            : ""
    }
}

/// A command that bootstraps the database, then prints what `body` returns.
protocol ScorekeeperSubcommand: AsyncParsableCommand {
    var options: DatabaseOptions { get }
    /// Whether the command changes data (and so gets the preview-mode footnote).
    var isChange: Bool { get }
    func body(_ keeper: Scorekeeper) throws -> String
}

extension ScorekeeperSubcommand {
    var isChange: Bool { true }

    func run() async throws {
        try options.bootstrap()
        let text = try body(Scorekeeper())
        print(text + (isChange ? options.changeFootnote : "") + (try await options.previewSyncFootnote()))
    }
}
