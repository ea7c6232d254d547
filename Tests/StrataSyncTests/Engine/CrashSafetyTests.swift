import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// A write that committed is never lost to sync, even when the process dies right after it,
/// in the middle of a later write, or between the two transactions of a change-log drain.
@Suite(.timeLimit(.minutes(5))) struct CrashSafetyTests {
    /// The child process, built beside the test binary.
    static var writerURL: URL? {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        for candidate in candidates.compactMap({ $0 }) {
            var directory = candidate.deletingLastPathComponent()
            for _ in 0..<4 {
                let url = directory.appendingPathComponent("strata-sync-crash-writer")
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
                directory = directory.deletingLastPathComponent()
            }
        }
        return nil
    }

    /// Runs the writer until it printed `count` committed ids, kills it with SIGKILL, and
    /// returns every id it printed and whether the kill is what stopped it. It blocks on the
    /// writer's output: tests call it on a thread of its own (``runWriterAndKill(path:after:arguments:)``).
    static func runWriterAndKill(_ writer: URL, arguments: [String], after count: Int) throws -> (ids: [String], killed: Bool) {
        let process = Process()
        process.executableURL = writer
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var text = ""
        while text.split(separator: "\n").count < count {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }  // the writer ended on its own: an error, reported below
            text += String(decoding: data, as: UTF8.self)
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        text += String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Only whole lines: a line cut by the kill names a row whose commit is not known.
        let ids = text.split(separator: "\n", omittingEmptySubsequences: true).dropLast(text.hasSuffix("\n") ? 0 : 1).map(String.init)
        return (ids, process.terminationReason == .uncaughtSignal)
    }

    /// ``runWriterAndKill(_:arguments:after:)`` on a thread of its own: its reads and waits block,
    /// and a cooperative thread must not.
    func runWriterAndKill(path: String, after count: Int, arguments: [String]? = nil) async throws -> [String] {
        let writer = try #require(Self.writerURL, "strata-sync-crash-writer is built by `swift build --build-tests`")
        let (ids, killed) = try await runOnBackgroundThread {
            try Self.runWriterAndKill(writer, arguments: arguments ?? [path], after: count)
        }
        #expect(killed, "the writer stopped before it was killed")
        return ids
    }

    @Test(arguments: [40, 137, 400])
    func everyCommittedRowIsSentAfterTheWriterIsKilled(after count: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("crash.sqlite")
        let committed = try await runWriterAndKill(path: path, after: count)
        #expect(committed.count >= count)

        let pool = try DatabasePool(path: path)
        let cloud = MockCloud()
        let engine = try SyncEngine(
            for: pool, tableNames: ["items"], container: cloud.container(user: "crash"),
            configuration: SyncEngineConfiguration(deviceID: "survivor", schedule: nil), startImmediately: false)
        try await engine.sendChanges()
        let sent = Set(cloud.records(in: CloudZoneID(name: "strata.default", owner: "crash")).map(\.id.name))
        let lost = committed.filter { !sent.contains("\($0):items") }
        #expect(lost.isEmpty, "committed but never sent: \(lost.prefix(10))")
        #expect(try await engine.pendingCount() == 0)
    }

    @Test func anEditAfterTheUserFileWasRestoredFromAnOlderCopyIsStillSent() async throws {
        let cloud = MockCloud()
        let first = try await SyncTestDevice("a", cloud: cloud)
        try await first.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Go')")
        try await first.engine.sendChanges()
        // The user's file comes back from a backup taken before the log had any entry; the
        // metadatabase still says how far it drained the newer log.
        try await first.database.write { db in try db.execute(sql: "DELETE FROM strata_sync_changes") }
        let restarted = try await SyncTestDevice("a", cloud: cloud, schema: "", database: first.database)
        try await restarted.execute("INSERT INTO games (id, title) VALUES ('g3', 'Chess')")
        try await restarted.engine.sendChanges()
        let names = cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).map(\.id.name).sorted()
        #expect(names == ["g1:games", "g2:games", "g3:games"])
        #expect(try await restarted.pending() == 0)
    }
}
