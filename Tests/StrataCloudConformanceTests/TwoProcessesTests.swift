import Foundation
import Synchronization
import Testing

/// The whole live path, as users run it: two `scorekeeper` processes, each with its own SQLite
/// file, syncing through two `strata-cloud serve` instances on one PostgreSQL database. The
/// watching process sees the other's increment arrive by push: its engine polls only every 60
/// seconds, and the test gives up after 30.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"))
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

    /// A child process whose standard output the test reads up to a line it expects.
    final class Child: Sendable {
        let process: Process
        private let output: Pipe
        private let seen = Mutex("")

        init(_ executable: URL, _ arguments: [String]) throws {
            process = Process()
            process.executableURL = executable
            process.arguments = arguments
            output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
        }

        /// Reads until the output contains `text`; returns everything read so far.
        @discardableResult
        func read(until text: String) throws -> String {
            while true {
                let soFar = seen.withLock { $0 }
                if soFar.contains(text) { return soFar }
                let data = output.fileHandleForReading.availableData
                if data.isEmpty { throw TwoProcessesError.ended("ended before printing \(text):\n\(soFar)") }
                seen.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }

        /// Runs to its end and returns its output.
        func finish() throws -> String {
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = seen.withLock { $0 + String(decoding: data, as: UTF8.self) }
            guard process.terminationStatus == 0 else { throw TwoProcessesError.ended("exit \(process.terminationStatus):\n\(text)") }
            return text
        }

        func stop() {
            if process.isRunning { process.terminate() }
        }
    }

    /// The children to stop at the end, or when the watchdog fires.
    final class Children: Sendable {
        private let all: Mutex<[Child]>
        init(_ children: [Child]) { all = Mutex(children) }
        func add(_ child: Child) { all.withLock { $0.append(child) } }
        func stopAll() { for child in all.withLock({ $0 }) { child.stop() } }
    }

    @Test func anIncrementInOneProcessReachesAWatchingProcessThroughTwoServiceInstances() async throws {
        let server = try Self.executable("strata-cloud")
        let scorekeeper = try Self.executable("scorekeeper")
        let postgres = try #require(CloudKind.postgresURL)
        let name = "two_processes_\(UInt32.random(in: 0...UInt32.max))"
        try await AdminConnection.shared.createDatabase(name)
        var database = URLComponents(url: postgres, resolvingAgainstBaseURL: false)
        database?.path = "/" + name
        let databaseURL = try #require(database?.url).absoluteString
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        _ = try Child(server, ["migrate", "--database-url", databaseURL, "--log-level", "error"]).finish()
        let instances = try (0..<2).map { _ in
            try Child(server, ["serve", "--database-url", databaseURL, "--port", "0", "--jwt-key", Self.key, "--log-level", "error"])
        }
        let children = Children(instances)
        defer { children.stopAll() }
        // A safety net, not a wait: whatever still runs after 30 seconds is stopped, and the
        // reads below fail instead of hanging.
        let watchdog = Task {
            try? await Task.sleep(for: .seconds(30))
            children.stopAll()
        }
        defer { watchdog.cancel() }
        let urls = try instances.map { instance in
            let line = try instance.read(until: "\n")
            let port = try #require(line.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) })
            return "http://127.0.0.1:\(port)"
        }
        let token = try Child(server, ["token", "--user", "blob", "--jwt-key", Self.key]).finish()
            .trimmingCharacters(in: .whitespacesAndNewlines)
        func run(_ arguments: [String], file: String, instance: Int) throws -> String {
            try Child(scorekeeper, arguments + ["--database", directory.appendingPathComponent(file).path, "--cloud", urls[instance], "--token", token])
                .finish()
        }

        _ = try run(["add-game", "Game night"], file: "phone.sqlite", instance: 0)
        _ = try run(["add-player", "Game night", "Blob"], file: "phone.sqlite", instance: 0)
        let watch = try Child(scorekeeper, [
            "watch", "--database", directory.appendingPathComponent("laptop.sqlite").path, "--cloud", urls[1], "--token", token,
        ])
        children.add(watch)
        try watch.read(until: "Blob (0)")

        let increment = try run(["increment", "Blob", "--by", "3"], file: "phone.sqlite", instance: 0)
        #expect(increment.contains("Blob: +3, now 3."))
        let frames = try watch.read(until: "Blob (3)")
        #expect(frames.contains("Scoreboard, update 1"))
    }
}
