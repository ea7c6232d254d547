import Foundation
import Logging
import ScorekeeperCore
import Strata
import StrataTestSupport
import Testing

@testable import ScorekeeperCommands

/// The bar Scorekeeper draws on standard error while a long sync with the cloud runs (issue
/// #27), from the engine's progress: tested through what it prints.
@Suite("The sync progress bar", .timeLimit(.minutes(1)))
struct SyncProgressBarTests {
    let zone = CloudZoneID(name: "strata.default", owner: "blob")

    @Test func theBarShowsRecordsAgainstTheEstimatedTotal() {
        let bar = SyncProgressBar(width: 10, minimumRecords: 100)
        #expect(bar.line(for: SyncProgress(zones: [zone: .init(sent: 512, toSend: 1000)])) == "[#####-----] 512/1000 records sent")
        #expect(bar.line(for: SyncProgress(zones: [zone: .init(fetched: 0, toFetch: 300)])) == "[----------] 0/300 records fetched")
        #expect(bar.line(for: SyncProgress(zones: [zone: .init(fetched: 300, toFetch: 300)])) == "[##########] 300/300 records fetched")
        // A short sync shows nothing; nor does nothing under way.
        #expect(bar.line(for: SyncProgress(zones: [zone: .init(sent: 1, toSend: 99)])) == nil)
        #expect(bar.line(for: SyncProgress()) == nil)
    }

    /// A Scorekeeper database with one game and `records - 1` players, and an engine over
    /// `cloud` sending and fetching 25 records at a time.
    func device(_ name: String, cloud: MockCloud, records: Int = 0) async throws -> SyncEngine {
        let database = try DatabaseQueue()
        // Migrating writes synchronously: never on a cooperative thread.
        try await runOnBackgroundThread { try Schema.migrator(erasingOnSchemaChange: false).migrate(database) }
        try await database.write { db in
            guard records > 0 else { return }
            let game = "00000000-0000-0000-0000-000000000000"
            try db.execute(
                sql: "INSERT INTO games (id, title, createdAt) VALUES (?, 'Marathon', '2026-01-01 00:00:00.000')", arguments: [game])
            for index in 1..<records {
                try db.execute(
                    sql: "INSERT INTO players (id, gameID, name, createdAt) VALUES (?, ?, ?, '2026-01-01 00:00:00.000')",
                    arguments: [String(format: "00000000-0000-0000-0000-%012d", index), game, "Player \(index)"])
            }
        }
        let container = cloud.container(user: "blob")
        // Warnings only: the engine's table of every record sent would drown the test's output.
        var quiet = Logger(label: "scorekeeper.sync.test")
        quiet.logLevel = .warning
        let logger = quiet
        // Creating an engine writes synchronously: never on a cooperative thread.
        return try await runOnBackgroundThread {
            try SyncEngine(
                for: database, tables: Game.self, Player.self, container: container,
                configuration: SyncEngineConfiguration(deviceID: name, batchSize: 25, fetchPageSize: 25, schedule: nil),
                logger: logger, startImmediately: false)
        }
    }

    /// Each state of the bar drawn, in order.
    func frames(_ output: String) -> [String] {
        output.split(whereSeparator: { $0 == "\r" || $0 == "\n" }).map { $0.trimmingCharacters(in: .whitespaces) }
    }

    func bar(_ done: Int, _ total: Int, _ direction: String) -> String {
        let filled = done * 20 / total
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: 20 - filled)
            + "] \(done)/\(total) records \(direction)"
    }

    @Test func aLongSyncDrawsEveryBatchAndPageUpToTheTotal() async throws {
        let cloud = MockCloud()
        let laptop = try await device("laptop", cloud: cloud, records: 120)
        let sent = OutputRecorder()
        let problem = await CloudSync.run(
            laptop, within: .seconds(50), cloud: "mock", database: "laptop.sqlite", progress: SyncProgressPrinter(write: sent.write))
        #expect(problem == nil)
        #expect(frames(sent.text) == [0, 25, 50, 75, 100, 120].map { bar($0, 120, "sent") })
        #expect(sent.text.hasSuffix("records sent\n"))
        #expect(sent.text.contains("\r[####----------------] 25/120 records sent"))

        let phone = try await device("phone", cloud: cloud)
        let fetched = OutputRecorder()
        let answer = await CloudSync.run(
            phone, within: .seconds(50), cloud: "mock", database: "phone.sqlite", progress: SyncProgressPrinter(write: fetched.write))
        #expect(answer == nil)
        #expect(frames(fetched.text) == [25, 50, 75, 100, 120].map { bar($0, 120, "fetched") })
        #expect(try await phone.pendingCount() == 0)
    }

    @Test func aShortSyncDrawsNothing() async throws {
        let cloud = MockCloud()
        let laptop = try await device("laptop", cloud: cloud, records: 5)
        let output = OutputRecorder()
        let problem = await CloudSync.run(
            laptop, within: .seconds(50), cloud: "mock", database: "laptop.sqlite", progress: SyncProgressPrinter(write: output.write))
        #expect(problem == nil)
        #expect(output.text.isEmpty)
    }

    @Test func fetchingThenSendingDrawsTwoLines() async throws {
        let printer = OutputRecorder()
        let drawer = SyncProgressPrinter(bar: SyncProgressBar(width: 4, minimumRecords: 1), write: printer.write)
        drawer.show(SyncProgress(zones: [zone: .init(fetched: 1, toFetch: 2)]))
        drawer.show(SyncProgress(zones: [zone: .init(fetched: 2, toFetch: 2)]))
        drawer.show(SyncProgress())
        drawer.show(SyncProgress(zones: [zone: .init(sent: 10, toSend: 10)]))
        drawer.end()
        #expect(printer.text == "[##--] 1/2 records fetched\r[####] 2/2 records fetched\n[####] 10/10 records sent\n")
    }
}
