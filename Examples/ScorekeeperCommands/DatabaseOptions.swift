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

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Sync the --database file through this strata-cloud service (for example http://127.0.0.1:8080)."
                + (ScorekeeperCommand.liveCloud == nil ? " Needs scorekeeper-live, which links the live cloud's client." : ""),
            valueName: "url"))
    var cloud: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The bearer token for --cloud (`strata-cloud token --user NAME`); default: $STRATA_CLOUD_TOKEN.", valueName: "token"))
    var token: String?

    @Option(
        name: .long,
        help: ArgumentHelp("How long a sync with --cloud may take before the command goes on without it.", valueName: "seconds"))
    var syncTimeout: Double = 10

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep this device's end-to-end encryption keys in this file (mode 0600; default: beside --database, <database>.strata-keys). Processes given one file share keys, as a user's devices whose keychain syncs do; a device without the keys must be enrolled.",
            valueName: "path"))
    var keys: String?

    var isPreview: Bool { database == nil }

    func validate() throws {
        if let database {
            // A mistyped folder must not be created silently: the file would land somewhere
            // the user never looks.
            let folder = URL(fileURLWithPath: database).deletingLastPathComponent().path
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) else {
                throw ValidationError("The folder \(folder) does not exist: create it first, or choose another --database path.")
            }
            guard isDirectory.boolValue else {
                throw ValidationError("\(folder) is not a folder: choose another --database path.")
            }
        }
        guard syncTimeout > 0, syncTimeout.isFinite else {
            throw ValidationError("--sync-timeout must be a positive number of seconds.")
        }
        guard let cloud else { return }
        guard ScorekeeperCommand.liveCloud != nil else {
            throw ValidationError(
                "--cloud needs the live cloud's client, which scorekeeper leaves out to build fast: "
                    + "run scorekeeper-live with the same arguments (swift run scorekeeper-live ...).")
        }
        guard database != nil else { throw ValidationError("--cloud syncs a database file: add --database PATH.") }
        guard let url = URL(string: cloud), url.scheme == "http" || url.scheme == "https" else {
            throw ValidationError("\(cloud) is not an http(s) URL.")
        }
        guard (token ?? ProcessInfo.processInfo.environment["STRATA_CLOUD_TOKEN"]) != nil else {
            throw ValidationError("--cloud needs --token TOKEN (or STRATA_CLOUD_TOKEN).")
        }
    }

    /// The live cloud's container, when `--cloud` is given (to `scorekeeper-live`).
    func cloudContainer() -> (any CloudContainer)? {
        guard let cloud, let url = URL(string: cloud),
            let token = token ?? ProcessInfo.processInfo.environment["STRATA_CLOUD_TOKEN"],
            let connect = ScorekeeperCommand.liveCloud
        else { return nil }
        return connect(url, token)
    }

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
            if isPreview {
                try $0.bootstrapSyncEngine()
            } else if let container = cloudContainer() {
                try $0.bootstrapSyncEngine(container: container, keys: keys)
            }
        }
    }

    /// In preview mode, syncs once with the preview's mock cloud and says what it holds.
    func previewSyncFootnote() async throws -> String {
        guard isPreview else { return "" }
        return "\n\n" + (try await Scorekeeper().previewSyncSummary())
    }

    /// With `--cloud`, exchanges changes with the service: before a command, to show what
    /// other devices did; after it, so its change reaches them before the process exits.
    ///
    /// Local first: a sync that fails or takes longer than `--sync-timeout` never stops the
    /// command. It returns what to tell the user instead; the change stays in the file's sync
    /// log and goes out with the next sync.
    func syncWithCloud() async -> String? {
        guard let cloud, let database else { return nil }
        @Dependency(\.defaultSyncEngine) var engine
        return await CloudSync.run(engine, within: .milliseconds(Int64(syncTimeout * 1000)), cloud: cloud, database: database)
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
        // A cloud that did not answer before the command is not waited for again after it.
        var cloudProblem = await options.syncWithCloud()
        let text = try body(Scorekeeper())
        if cloudProblem == nil { cloudProblem = await options.syncWithCloud() }
        print(text + (isChange ? options.changeFootnote : "") + (try await options.previewSyncFootnote()))
        if let cloudProblem { FileHandle.standardError.write(Data((cloudProblem + "\n").utf8)) }
    }
}
