import Foundation
import Synchronization
import Testing

/// The whole live path, as users run it: two `scorekeeper-live` processes, each with its own SQLite
/// file, syncing through two `strata-cloud serve` instances on one PostgreSQL database. The
/// watching process sees the other's increment arrive by push: its engine polls only every 60
/// seconds, and the test gives up after 30.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(3)))
struct TwoProcessesTests {
    static let key = "strata-two-processes-key-0123456789"

    /// A built executable of this package, beside the test binary.
    static func executable(_ name: String) throws -> URL {
        let candidates = [Bundle.main.executableURL, URL(fileURLWithPath: CommandLine.arguments[0])]
        for candidate in candidates.compactMap({ $0 }) {
            var directory = candidate.deletingLastPathComponent()
            for _ in 0..<4 {
                let url = directory.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: url.path) { return url }
                directory = directory.deletingLastPathComponent()
            }
        }
        throw TwoProcessesError.missing("\(name) is built by `swift build --build-tests`")
    }

    enum TwoProcessesError: Error {
        case missing(String)
        case ended(String)
    }

    /// The children to stop at the end.
    final class Children: Sendable {
        private let all: Mutex<[ChildProcess]>
        init(_ children: [ChildProcess]) { all = Mutex(children) }
        func add(_ child: ChildProcess) { all.withLock { $0.append(child) } }
        func stopAll() { for child in all.withLock({ $0 }) { child.stop() } }
    }

    @Test func anIncrementInOneProcessReachesAWatchingProcessThroughTwoServiceInstances() async throws {
        let server = try Self.executable("strata-cloud")
        let scorekeeper = try Self.executable("scorekeeper-live")
        let postgres = try #require(CloudKind.postgresURL)
        let name = "two_processes_\(UInt32.random(in: 0...UInt32.max))"
        try await AdminConnection.shared.createDatabase(name)
        var database = URLComponents(url: postgres, resolvingAgainstBaseURL: false)
        database?.path = "/" + name
        let databaseURL = try #require(database?.url).absoluteString
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        // Every read below is bounded and kills its child when its time runs out; output is read
        // on threads of its own, never on the cooperative pool.
        _ = try await ChildProcess(server, ["migrate", "--database-url", databaseURL, "--log-level", "error"]).finish(within: .seconds(60))
        let instances = try (0..<2).map { _ in
            try ChildProcess(
                server, ["serve", "--database-url", databaseURL, "--port", "0", "--jwt-key", Self.key, "--log-level", "error"])
        }
        let children = Children(instances)
        defer { children.stopAll() }
        var urls: [String] = []
        for instance in instances {
            let line = try await instance.read(until: "\n")
            let port = try #require(line.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
            urls.append("http://127.0.0.1:\(port)")
        }
        // One key file for both processes: Blob's two devices share keys, as a keychain that
        // syncs would have them (enrollment has tests of its own).
        let keys = directory.appendingPathComponent("blob.strata-keys").path
        let token = try await ChildProcess(server, ["token", "--user", "blob", "--jwt-key", Self.key]).finish()
            .trimmingCharacters(in: .whitespacesAndNewlines)
        func run(_ arguments: [String], file: String, instance: Int) async throws -> String {
            try await ChildProcess(
                scorekeeper,
                arguments + [
                    "--database", directory.appendingPathComponent(file).path, "--cloud", urls[instance], "--token", token, "--keys",
                    keys,
                ]
            ).finish()
        }

        _ = try await run(["add-game", "Game night"], file: "phone.sqlite", instance: 0)
        _ = try await run(["add-player", "Game night", "Blob"], file: "phone.sqlite", instance: 0)
        let watch = try ChildProcess(
            scorekeeper,
            [
                "watch", "--database", directory.appendingPathComponent("laptop.sqlite").path, "--cloud", urls[1], "--token", token,
                "--keys", keys,
            ])
        children.add(watch)
        try await watch.read(until: "Blob (0)")

        let increment = try await run(["increment", "Blob", "--by", "3"], file: "phone.sqlite", instance: 0)
        #expect(increment.contains("Blob: +3, now 3."))
        let frames = try await watch.read(until: "Blob (3)")
        #expect(frames.contains("Scoreboard, update 1"))
    }

    /// `strata-cloud migrate` exits once its work is done, every time, and again when there is
    /// nothing to do.
    @Test func migrateExitsWhenItsWorkIsDone() async throws {
        let server = try Self.executable("strata-cloud")
        let postgres = try #require(CloudKind.postgresURL)
        let name = "migrate_exits_\(UInt32.random(in: 0...UInt32.max))"
        try await AdminConnection.shared.createDatabase(name)
        var database = URLComponents(url: postgres, resolvingAgainstBaseURL: false)
        database?.path = "/" + name
        let databaseURL = try #require(database?.url).absoluteString
        let start = ContinuousClock.now
        for round in 0..<5 {
            let output = try await ChildProcess(server, ["migrate", "--database-url", databaseURL, "--log-level", "error"])
                .finish(within: .seconds(20))
            #expect(output.contains(round == 0 ? "Applied migrations" : "The schema is up to date."))
        }
        #expect(ContinuousClock.now - start < .seconds(60))
        await AdminConnection.shared.dropDatabase(name)
    }

    /// A parent that ignores SIGTERM (as ServiceLifecycle leaves a process that watches it)
    /// passes that on across `exec`: `strata-cloud` restores the default first, so SIGTERM stops
    /// a `migrate` that waits on a database that never answers.
    @Test func aSubcommandStartedWithSIGTERMIgnoredStillStopsOnIt() async throws {
        let server = try Self.executable("strata-cloud")
        let blackhole = try ChildProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "python3", "-c",
                "import socket,time\ns=socket.socket();s.bind(('127.0.0.1',0));s.listen(8)\nprint(s.getsockname()[1],flush=True)\nc=[]\nend=time.time()+60\ns.settimeout(1)\nwhile time.time()<end:\n  try: c.append(s.accept())\n  except Exception: pass\n",
            ])
        defer { blackhole.send(SIGKILL) }
        let port = try await blackhole.read(until: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        let migrate = try ChildProcess(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", "trap '' TERM; exec \"$0\" migrate --database-url postgres://u@127.0.0.1:\(port)/db", server.path,
            ])
        // Bounded: until the child no longer ignores SIGTERM (it resets it first thing).
        var ignoring = true
        for _ in 0..<200 where ignoring {
            let status = (try? String(contentsOfFile: "/proc/\(migrate.pid)/status", encoding: .utf8)) ?? ""
            let mask =
                status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }
                .flatMap { UInt64($0.dropFirst("SigIgn:".count).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
            ignoring = mask & (1 << (UInt64(SIGTERM) - 1)) != 0 || !status.contains("strata-cloud")
            if ignoring { try await Task.sleep(for: .milliseconds(25)) }
        }
        #expect(!ignoring, "strata-cloud still ignores SIGTERM")
        migrate.send(SIGTERM)
        #expect(try await migrate.exitStatus(within: .seconds(10)) == 128 + SIGTERM)
    }
}
