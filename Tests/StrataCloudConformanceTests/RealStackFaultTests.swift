import Foundation
import Logging
import StrataCloudClient
import StrataCloudService
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// The real-stack sibling of `ConvergenceTests` (issue #25): devices, each a `SyncEngine` over
/// its own SQLite database, sync through `CloudServiceContainer` → a fault-injecting TCP proxy →
/// two `strata-cloud serve` processes → one private PostgreSQL cluster. A seed drives random
/// edits over two related tables (parents and children, large transactions, edits after
/// inserts), random syncs, and faults at the real boundaries: connections cut mid-request and
/// mid-response, responses delayed, a service SIGKILLed mid-sync and restarted, PostgreSQL
/// restarted (`pg_ctl restart -m fast`) mid-sync. Every seed must end converged: devices
/// equal, nothing pending, every row no device deleted present everywhere, no sync slower than
/// a bound (nothing hung).
///
/// CI runs a few seeds; `STRATA_SOAK_SEEDS=N` runs N seeds (from `STRATA_SOAK_FIRST_SEED`, 1
/// by default) and prints the soak's numbers. The sequence of edits and faults is the seed's;
/// the exact moment a kill or restart lands within a request is the machine's.
@Suite(
    .timeLimit(.minutes(5)),
    .enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES (PostgreSQL installed)"),
    .timeLimit(.minutes(RealStackSoak.seeds == nil ? 5 : 240)))
struct RealStackFaultTests {
    static let key = "strata-real-stack-key-0123456789abcdef"

    static var seeds: [UInt64] {
        guard let count = RealStackSoak.seeds else { return [1, 2, 3, 4] }
        let first = ProcessInfo.processInfo.environment["STRATA_SOAK_FIRST_SEED"].flatMap { UInt64($0) } ?? 1
        return (0..<UInt64(max(count, 1))).map { first + $0 }
    }

    /// The longest one `syncChanges` may take, faults included, before it counts as hung. The
    /// client's own request timeout is longer, so a hung request shows here first.
    static let syncBound: Duration = .seconds(20)

    /// What the run counts, across seeds.
    final class Tally: Sendable {
        struct Counts: Sendable {
            var faults: [String: Int] = [:]
            var transientFailures = 0
            var syncs = 0
            var slowestSync: Duration = .zero
            var seeds = 0
            var failedSeeds: [UInt64] = []
            var rowsChecked = 0
            var lost = 0
        }

        let counts = Mutex(Counts())
        func fault(_ kind: String) { counts.withLock { $0.faults[kind, default: 0] += 1 } }
    }

    /// One `strata-cloud serve` process, restartable (on a new port the proxy is repointed to).
    final class Instance: Sendable {
        let server: URL
        let databaseURL: String
        private let current = Mutex<(child: ChildProcess, port: UInt16)?>(nil)

        init(server: URL, databaseURL: String) {
            self.server = server
            self.databaseURL = databaseURL
        }

        var port: UInt16 { current.withLock { $0?.port ?? 0 } }

        /// Starts the process; returns its port.
        @discardableResult
        func start() async throws -> UInt16 {
            let child = try ChildProcess(
                server,
                [
                    "serve", "--database-url", databaseURL, "--port", "0", "--jwt-key", RealStackFaultTests.key,
                    "--log-level", "critical", "--request-deadline", "10", "--shutdown-timeout", "5",
                ])
            do {
                let line = try await child.read(until: "\n", within: .seconds(30))
                let text = line.split(separator: "\n").first.flatMap { $0.split(separator: " ").last } ?? ""
                guard let port = UInt16(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                    throw ChildProcess.Failure.ended("no port in \(line)")
                }
                current.withLock { $0 = (child, port) }
                return port
            } catch {
                child.send(SIGKILL)
                throw error
            }
        }

        /// SIGKILL, and waits (bounded) until the process is gone.
        func kill() async throws {
            guard let child = current.withLock({ $0?.child }) else { return }
            child.send(SIGKILL)
            _ = try await child.exitStatus(within: .seconds(10))
        }

        func stop() async {
            guard let child = current.withLock({ $0?.child }) else { return }
            child.stop()
            if (try? await child.exitStatus(within: .seconds(15))) == nil { child.send(SIGKILL) }
        }
    }

    /// The stack every seed of a run shares: a private PostgreSQL cluster, two service
    /// instances on it, a proxy in front of each. Seeds keep apart by user.
    struct Stack {
        let postgres: ServiceFaultTests.PrivatePostgres
        let instances: [Instance]
        let proxies: [FaultProxy]

        static func start() async throws -> Stack {
            let server = try TwoProcessesTests.executable("strata-cloud")
            let postgres = try await ServiceFaultTests.PrivatePostgres.start()
            do {
                let databaseURL = postgres.url.absoluteString
                _ = try await ChildProcess(server, ["migrate", "--database-url", databaseURL, "--log-level", "error"])
                    .finish(within: .seconds(60))
                var instances: [Instance] = []
                var proxies: [FaultProxy] = []
                for _ in 0..<2 {
                    let instance = Instance(server: server, databaseURL: databaseURL)
                    instances.append(instance)
                    let port = try await instance.start()
                    proxies.append(try FaultProxy(upstreamPort: port))
                }
                return Stack(postgres: postgres, instances: instances, proxies: proxies)
            } catch {
                await postgres.stop()
                throw error
            }
        }

        func stop() async {
            for proxy in proxies { proxy.stop() }
            for instance in instances { await instance.stop() }
            await postgres.stop()
        }

        /// Kills instance `index` and starts it again; its proxy follows it to its new port.
        func restart(_ index: Int) async throws {
            try await instances[index].kill()
            try await start(index)
        }

        /// Starts instance `index` again after a kill; its proxy follows it to its new port.
        func start(_ index: Int) async throws {
            let port = try await instances[index].start()
            proxies[index].repoint(to: port)
        }

        /// A container straight to instance 0, past the proxy, to look at the cloud's contents.
        func direct(user: String) -> CloudServiceContainer {
            CloudServiceContainer(
                baseURL: URL(string: "http://127.0.0.1:\(instances[0].port)")!,
                token: { try await CloudServiceTokens.issue(user: user, key: RealStackFaultTests.key) },
                identifier: "strata.cloud.real-stack", timeout: .seconds(30))
        }
    }

    /// A container for `user` through `proxy`, reconnecting its change stream quickly.
    static func container(user: String, through proxy: FaultProxy) -> CloudServiceContainer {
        CloudServiceContainer(
            baseURL: URL(string: "http://127.0.0.1:\(proxy.port)")!,
            token: { try await CloudServiceTokens.issue(user: user, key: RealStackFaultTests.key) },
            identifier: "strata.cloud.real-stack", timeout: .seconds(30),
            reconnection: .init(initialDelay: .milliseconds(50)))
    }

    /// The devices' engines log only what is critical: faults are the point here.
    static let logger: Logger = {
        var logger = Logger(label: "strata.sync.real-stack")
        logger.logLevel = .critical
        return logger
    }()

    static let batchSizes = [1, 2, 3, 5, 8, 400]

    @Test func devicesConvergeThroughFaultsAtTheRealBoundaries() async throws {
        let stack = try await Stack.start()
        let tally = Tally()
        let run = UInt32.random(in: 0...UInt32.max)
        let started = ContinuousClock.now
        for seed in Self.seeds {
            do {
                try await converge(seed: seed, user: "soak\(run)-\(seed)", stack: stack, tally: tally)
            } catch {
                tally.counts.withLock { $0.failedSeeds.append(seed) }
                Issue.record("seed \(seed) failed: \(error)")
                Self.emit("seed \(seed) failed: \(error)")
            }
            let done = tally.counts.withLock { counts in
                counts.seeds += 1
                return counts.seeds
            }
            // A long soak reports as it goes, so a run cut short still has its numbers.
            if done % 25 == 0, RealStackSoak.seeds != nil {
                Self.emit(
                    Self.report(tally.counts.withLock { $0 }, proxies: stack.proxies.map(\.stats), elapsed: ContinuousClock.now - started))
            }
        }
        let elapsed = ContinuousClock.now - started
        let proxyStats = stack.proxies.map(\.stats)
        await stack.stop()
        Self.emit(Self.report(tally.counts.withLock { $0 }, proxies: proxyStats, elapsed: elapsed))
        #expect(tally.counts.withLock { $0.lost } == 0)
    }

    /// Prints `text`, and appends it to the file `STRATA_SOAK_REPORT` names: `swift test`
    /// holds a test's output back until the run ends, and a soak cut short would lose it.
    static func emit(_ text: String) {
        print(text)
        guard let path = ProcessInfo.processInfo.environment["STRATA_SOAK_REPORT"] else { return }
        if !FileManager.default.fileExists(atPath: path) { FileManager.default.createFile(atPath: path, contents: nil) }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data((text + "\n").utf8))
        try? handle.close()
    }

    static func report(_ counts: Tally.Counts, proxies: [FaultProxy.Stats], elapsed: Duration) -> String {
        var faults = counts.faults
        for stats in proxies {
            for (kind, count) in stats.fired { faults[kind, default: 0] += count }
        }
        let latencies = proxies.flatMap(\.latencies).sorted()
        let delayed = proxies.flatMap(\.delayedLatencies).sorted()
        func percentile(_ values: [Double], _ p: Double) -> String {
            guard !values.isEmpty else { return "-" }
            let index = min(values.count - 1, Int((Double(values.count) * p).rounded(.up)) - 1)
            return String(format: "%.1f ms", values[max(index, 0)] * 1000)
        }
        return """
            Real-stack faults: \(counts.seeds) seeds in \(elapsed), failed: \(counts.failedSeeds)
              syncs: \(counts.syncs), transient failures tolerated: \(counts.transientFailures), slowest sync: \(counts.slowestSync)
              requests through the proxies: \(proxies.map(\.requests).reduce(0, +)), connections refused (service down): \(proxies.map(\.refused).reduce(0, +))
              latency (first byte to first byte, undelayed): p50 \(percentile(latencies, 0.5)), p99 \(percentile(latencies, 0.99)), max \(percentile(latencies, 1))
              delayed answers: \(delayed.count), max \(percentile(delayed, 1))
              faults: \(faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
              rows checked: \(counts.rowsChecked), lost: \(counts.lost)
            """
    }

    /// Syncs `device`, tolerating transient failures; fails on anything else or on a sync that
    /// took longer than ``syncBound``.
    @discardableResult
    func sync(_ device: SyncTestDevice, seed: UInt64, tally: Tally) async throws -> Bool {
        let start = ContinuousClock.now
        defer {
            let elapsed = ContinuousClock.now - start
            tally.counts.withLock {
                $0.syncs += 1
                $0.slowestSync = max($0.slowestSync, elapsed)
            }
            #expect(elapsed < Self.syncBound, "seed \(seed): a sync of \(device.id) took \(elapsed)")
        }
        do {
            try await device.engine.syncChanges()
            return true
        } catch let error as CloudError where error.isTransient {
            tally.counts.withLock { $0.transientFailures += 1 }
            return false
        }
    }

    func converge(seed: UInt64, user: String, stack: Stack, tally: Tally) async throws {
        var random = SeededGenerator(state: seed)
        let clock = ManualWallClock()
        let count = Int.random(in: 2...3, using: &random)
        // Devices 0 and 2 go through instance 0, device 1 through instance 1: two services
        // on one database, always.
        var devices: [SyncTestDevice] = []
        for index in 0..<count {
            devices.append(
                try await SyncTestDevice(
                    "device\(index)", container: Self.container(user: user, through: stack.proxies[index % 2]), time: clock,
                    batchSize: Self.batchSizes.randomElement(using: &random) ?? 400,
                    fetchPageSize: Int.random(in: 1...6, using: &random), logger: Self.logger))
        }
        var deleted: Set<String> = []
        var created: [String] = []
        var gameOfPlayer: [String: String] = [:]
        let steps = 70
        for step in 0..<steps {
            let index = Int.random(in: 0..<devices.count, using: &random)
            let (device, via) = (devices[index], index % 2)
            clock.advance(by: Int64.random(in: -500...1_500, using: &random))
            switch Int.random(in: 0..<13, using: &random) {
            case 0, 1:
                let id = "g\(seed)-\(step)"
                try await device.execute("INSERT INTO games (id, title, score) VALUES ('\(id)', 'game \(step)', \(step))")
                created.append("game \(id)")
            case 2, 3:
                guard let game = try await device.strings("SELECT id FROM games").randomElement(using: &random) else { continue }
                let id = "p\(seed)-\(step)"
                try await device.execute("INSERT INTO players (id, gameID, name) VALUES ('\(id)', '\(game)', 'player \(step)')")
                created.append("player \(id)")
                gameOfPlayer["player \(id)"] = "game \(game)"
            case 4, 5:
                guard let game = try await device.strings("SELECT id FROM games").randomElement(using: &random) else { continue }
                let column = Bool.random(using: &random) ? "title = 'title \(step)'" : "score = \(step)"
                try await device.execute("UPDATE games SET \(column) WHERE id = '\(game)'")
            case 6:
                guard let player = try await device.strings("SELECT id FROM players").randomElement(using: &random) else { continue }
                try await device.execute("UPDATE players SET name = 'renamed \(step)' WHERE id = '\(player)'")
            case 7:
                let local = try await device.strings("SELECT 'game ' || id FROM games UNION ALL SELECT 'player ' || id FROM players")
                guard let victim = local.randomElement(using: &random) else { continue }
                let parts = victim.split(separator: " ")
                try await device.execute("DELETE FROM \(parts[0] == "game" ? "games" : "players") WHERE id = '\(parts[1])'")
                deleted.insert(victim)
            case 8:
                // A large transaction mixing parents and children, sometimes large enough for
                // many batches; then, often, the new game edited after its children.
                let local = try await device.strings("SELECT id FROM games")
                let game = "g\(seed)-\(step)"
                let children =
                    Bool.random(using: &random) ? Int.random(in: 1...12, using: &random) : Int.random(in: 20...60, using: &random)
                var statements = ["INSERT INTO games (id, title, score) VALUES ('\(game)', 'big \(step)', 0)"]
                created.append("game \(game)")
                for child in 0..<children {
                    let parent = Bool.random(using: &random) ? game : (local.randomElement(using: &random) ?? game)
                    let id = "p\(seed)-\(step)-\(child)"
                    statements.append("INSERT INTO players (id, gameID, name) VALUES ('\(id)', '\(parent)', 'member \(child)')")
                    created.append("player \(id)")
                    gameOfPlayer["player \(id)"] = "game \(parent)"
                    if let other = local.randomElement(using: &random), Bool.random(using: &random) {
                        statements.append("UPDATE games SET score = \(child) WHERE id = '\(other)'")
                    }
                }
                try await device.execute(statements.joined(separator: ";\n"))
                if Int.random(in: 0..<3, using: &random) > 0 {
                    try await device.execute("UPDATE games SET title = 'renamed big \(step)' WHERE id = '\(game)'")
                }
            default:
                let proxy = stack.proxies[via]
                switch Int.random(in: 0..<26, using: &random) {
                case 0..<4:
                    proxy.cutNextRequest()
                    try await sync(device, seed: seed, tally: tally)
                case 4..<8:
                    proxy.cutNextResponse()
                    try await sync(device, seed: seed, tally: tally)
                case 8..<11:
                    proxy.delayNextResponse(by: .milliseconds(Int.random(in: 50...1_500, using: &random)))
                    try await sync(device, seed: seed, tally: tally)
                case 11, 12:
                    // The service dies in the middle of the sync (or just before or after it).
                    let delay = Int.random(in: 0...150, using: &random)
                    tally.fault("service: SIGKILL + restart")
                    async let synced = sync(device, seed: seed, tally: tally)
                    try await Task.sleep(for: .milliseconds(delay))
                    try await stack.restart(via)
                    _ = try await synced
                case 16:
                    // The service is down for the whole sync: connections refused, then it is back.
                    tally.fault("service: SIGKILL, sync while down, restart")
                    try await stack.instances[via].kill()
                    try await sync(device, seed: seed, tally: tally)
                    try await stack.start(via)
                case 13:
                    let delay = Int.random(in: 0...150, using: &random)
                    tally.fault("postgres: restart -m fast")
                    async let synced = sync(device, seed: seed, tally: tally)
                    try await Task.sleep(for: .milliseconds(delay))
                    try await stack.postgres.restart()
                    _ = try await synced
                case 14:
                    tally.fault("proxy: all connections cut")
                    async let synced = sync(device, seed: seed, tally: tally)
                    try await Task.sleep(for: .milliseconds(Int.random(in: 0...100, using: &random)))
                    proxy.cutAll()
                    _ = try await synced
                case 15:
                    // A duplicated delivery: the device forgets its tokens and fetches everything again.
                    tally.fault("engine: change tokens forgotten")
                    try await device.database.write { db in
                        try db.execute(sql: "DELETE FROM strata_sync.state WHERE key LIKE 'token.%'")
                    }
                    try await sync(device, seed: seed, tally: tally)
                default:
                    try await sync(device, seed: seed, tally: tally)
                }
            }
        }

        // Settle: faults armed and not fired are dropped; transient failures (a service still
        // reconnecting to PostgreSQL) are retried, a bounded number of rounds.
        for proxy in stack.proxies { proxy.disarm() }
        var clean = 0
        for _ in 0..<30 where clean < 2 {
            var succeeded = true
            for device in devices {
                if try await !sync(device, seed: seed, tally: tally) { succeeded = false }
            }
            var pending = 0
            for device in devices { pending += try await device.engine.pendingCount() }
            if succeeded && pending == 0 {
                clean += 1
            } else {
                clean = 0
                if !succeeded { try await Task.sleep(for: .milliseconds(200)) }
            }
        }
        #expect(clean >= 2, "seed \(seed): never two clean sync rounds in a row")

        var rows: [[String]] = []
        for device in devices { rows.append(try await device.rows()) }
        let equal = rows.allSatisfy { $0 == rows[0] }
        #expect(equal, "seed \(seed) diverged:\n\(rows.map { $0.joined(separator: "\n") }.joined(separator: "\n---\n"))")
        for device in devices {
            #expect(try await device.engine.pendingCount() == 0, "seed \(seed): \(device.id) has changes pending")
        }
        // No acknowledged write lost: a row no device deleted (nor its game) is everywhere.
        var lost = 0
        var checked = 0
        for device in rows {
            let surviving = Set(device.map { $0.split(separator: " ").prefix(2).joined(separator: " ") })
            for row in created where !deleted.contains(row) {
                if let game = gameOfPlayer[row], deleted.contains(game) { continue }
                checked += 1
                if !surviving.contains(row) {
                    lost += 1
                    Issue.record("seed \(seed): \(row) was never deleted but is gone")
                }
            }
        }
        tally.counts.withLock {
            $0.lost += lost
            $0.rowsChecked += checked
        }
        // The cloud holds exactly what the devices hold (asked past the proxy).
        var names: Set<String> = []
        var token: CloudChangeToken?
        let zone = CloudZoneID(name: "strata.default", owner: user)
        let cloud = stack.direct(user: user).privateDatabase
        for _ in 0..<1_000 {
            let page = try await cloud.fetchZoneChanges(zone, since: token, limit: 1_000)
            for record in page.changed { names.insert(record.id.name) }
            for tombstone in page.deleted { names.remove(tombstone.id.name) }
            token = page.token
            if !page.moreComing { break }
        }
        let local = Set(
            rows[0].map { row in
                let parts = row.split(separator: " ")
                return "\(parts[1]):\(parts[0] == "game" ? "games" : "players")"
            })
        #expect(
            names == local,
            "seed \(seed): the cloud holds \(names.subtracting(local).sorted()) the devices do not, and lacks \(local.subtracting(names).sorted())"
        )
        if !equal || clean < 2 || names != local { throw SeedFailure.diverged(seed) }
    }

    enum SeedFailure: Error { case diverged(UInt64) }
}

/// The soak mode's switch: `STRATA_SOAK_SEEDS=N`.
enum RealStackSoak {
    static let seeds: Int? = ProcessInfo.processInfo.environment["STRATA_SOAK_SEEDS"].flatMap { Int($0) }
}
