import Foundation
import Strata
import Synchronization

/// Two devices of one user, each with its own database, syncing through one in-memory cloud:
/// the phone starts with the sample games, the laptop receives them, both edit the same game
/// while apart — each renames it and adds points to the same player — and after syncing both
/// show the same scoreboard: the later title, and both devices' points (scores are counters,
/// ``Schema/mergePolicies``).
///
/// Everything is deterministic (identifiers, dates, each device's clock), so the output is the
/// same on every run.
public struct DevicesDemo: Sendable {
    public init() {}

    /// The story, the sync log and both scoreboards, as text.
    public func run() async throws -> String {
        let cloud = MockCloud(identifier: "iCloud.scorekeeper.demo")
        let log = SyncLogCollector()
        let clock = DemoClock()
        let phone = try DemoDevice(name: "phone", cloud: cloud, log: log, clock: clock)
        let laptop = try DemoDevice(name: "laptop", cloud: cloud, log: log, clock: clock)
        var output: [String] = []
        func step(_ title: String, _ body: () async throws -> Void) async throws {
            try await body()
            output.append("── \(title)")
            output += log.drain()
            output.append("")
        }

        try await step("The phone starts with the sample games and syncs") {
            try phone.seed()
            try await phone.engine.syncChanges()
        }
        try await step("The laptop syncs and receives them") {
            try await laptop.engine.syncChanges()
        }
        let adaBefore = try phone.score(of: "Ada")
        try await step("Apart, both edit Weekly Poker Night, and both give Ada points") {
            clock.advance()
            _ = try phone.keeper { try $0.renameGame("Weekly Poker Night", to: "Poker Night") }
            _ = try phone.keeper { try $0.changeScore(of: "Ada", by: 5) }
            clock.advance()
            _ = try laptop.keeper { try $0.renameGame("Weekly Poker Night", to: "Friday Poker") }
            _ = try laptop.keeper { try $0.changeScore(of: "Ada", by: 10) }
        }
        try await step("The phone syncs first, then the laptop (its later title wins), then the phone again") {
            try await phone.engine.syncChanges()
            try await laptop.engine.syncChanges()
            try await phone.engine.syncChanges()
        }
        let phoneBoard = try phone.keeper { try $0.players(game: "Friday Poker") }
        let laptopBoard = try laptop.keeper { try $0.players(game: "Friday Poker") }
        let phonePending = try await phone.engine.pendingCount()
        let laptopPending = try await laptop.engine.pendingCount()
        output.append("── The phone now shows\n" + phoneBoard)
        output.append("")
        output.append("── The laptop now shows\n" + laptopBoard)
        output.append("")
        let adaOnPhone = try phone.score(of: "Ada")
        let adaOnLaptop = try laptop.score(of: "Ada")
        output.append(
            "Ada had \(adaBefore); +5 on the phone and +10 on the laptop while apart; now \(adaOnPhone) on the phone and \(adaOnLaptop) on the laptop: both changes count (a score is a counter)."
        )
        output.append("")
        let same = try phone.keeper { try $0.scoreboard() } == laptop.keeper { try $0.scoreboard() }
        output.append(
            "Converged: \(same ? "yes" : "NO"), the two scoreboards are \(same ? "identical" : "different"); changes waiting: phone \(phonePending), laptop \(laptopPending)."
        )
        return output.joined(separator: "\n") + "\n"
    }
}

/// One device of the demo: its database, its engine, and Scorekeeper on that database.
struct DemoDevice {
    static let date = Date(timeIntervalSince1970: 1_767_258_000)
    let name: String
    let database: DatabaseQueue
    let engine: SyncEngine

    init(name: String, user: String = "blob", cloud: MockCloud, log: SyncLogCollector, clock: DemoClock) throws {
        self.name = name
        database = try DatabaseQueue()
        try Schema.migrator(erasingOnSchemaChange: false).migrate(database)
        engine = try SyncEngine(
            for: database, tables: Game.self, Player.self, container: cloud.container(user: user),
            configuration: SyncEngineConfiguration(
                deviceID: name, physicalTime: clock.read, schedule: nil, mergePolicies: Schema.mergePolicies),
            logger: log.logger(device: name), startImmediately: false)
    }

    func seed() throws {
        try withDependencies {
            $0.uuid = .incrementing
            $0.date = .constant(Self.date)
        } operation: {
            _ = try database.write { db in try SampleData.seed(db) }
        }
    }

    /// The score of the one player named `name`.
    func score(of name: String) throws -> Int {
        try database.read { db in try Lookup.player(db, named: name, inGame: nil).player.score }
    }

    func keeper<T>(_ body: (Scorekeeper) throws -> T) throws -> T {
        try withDependencies {
            $0.defaultDatabase = database
            $0.uuid = .incrementing
            $0.date = .constant(Self.date)
        } operation: {
            try body(Scorekeeper())
        }
    }
}

/// The devices' shared wall clock, in Unix milliseconds, moved by the demo.
final class DemoClock: Sendable {
    private let milliseconds = Atomic<Int64>(1_767_258_000_000)

    func advance() { milliseconds.add(60_000, ordering: .relaxed) }

    var read: @Sendable () -> Int64 { { self.milliseconds.load(ordering: .relaxed) } }
}
