import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// Three devices change counters (`games.score`) at random — increments, decrements, inserts
/// with a starting value, several changes in one transaction — interleaved with random sends,
/// fetches and faults (dropped requests, lost responses, pages delivered again, pages
/// reordered); every seed must end with every device showing, for every game, its starting
/// value plus every change made anywhere, and nothing pending.
@Suite(.timeLimit(.minutes(5))) struct CounterConvergenceTests {
    /// Runs `body`; a dropped request or a lost response is retried by a later sync.
    static func ignoringTransientFailures(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as CloudError where error.isTransient {}
    }

    @Test(arguments: 1...100)
    func countersAddUpOnEveryDevice(seed: UInt64) async throws {
        try await run(seed: seed, encryption: .disabled)
    }

    @Test(arguments: 1...100)
    func sealedCountersAddUpOnEveryDevice(seed: UInt64) async throws {
        try await run(seed: seed, encryption: .endToEnd)
    }

    func run(seed: UInt64, encryption: SyncEncryption) async throws {
        var random = SeededGenerator(state: seed)
        let cloud = MockCloud()
        let time = ManualWallClock()
        var devices: [SyncTestDevice] = []
        for index in 0..<3 {
            devices.append(
                try await SyncTestDevice(
                    "device\(index)", cloud: cloud, time: time, batchSize: [1, 2, 400].randomElement(using: &random) ?? 400,
                    fetchPageSize: Int.random(in: 1...4, using: &random),
                    encryption: encryption, mergePolicies: [.counter(table: "games", column: "score")]))
        }
        var expected: [String: Int64] = [:]
        for step in 0..<50 {
            let device = devices[Int.random(in: 0..<3, using: &random)]
            time.advance(by: Int64.random(in: -500...1_500, using: &random))
            let local = try await device.strings("SELECT id FROM games ORDER BY id")
            switch Int.random(in: 0..<10, using: &random) {
            case 0:
                let id = "g\(step)"
                let start = Int64.random(in: -5...20, using: &random)
                // Sometimes changed again in the inserting transaction.
                let more = Bool.random(using: &random) ? Int64.random(in: -3...3, using: &random) : 0
                try await device.execute(
                    "INSERT INTO games (id, title, score) VALUES ('\(id)', 't', \(start)); UPDATE games SET score = score + \(more) WHERE id = '\(id)'"
                )
                expected[id] = start + more
            case 1, 2, 3, 4:
                guard let game = local.randomElement(using: &random) else { continue }
                let delta = Int64.random(in: -4...6, using: &random)
                try await device.execute("UPDATE games SET score = score + \(delta) WHERE id = '\(game)'")
                expected[game, default: 0] += delta
            case 5:
                // Several games in one transaction, one of them twice.
                guard let first = local.first, let last = local.last else { continue }
                try await device.execute(
                    "UPDATE games SET score = score + 1 WHERE id = '\(first)'; UPDATE games SET score = score + 2 WHERE id = '\(last)'; UPDATE games SET score = score - 1 WHERE id = '\(first)'"
                )
                expected[last, default: 0] += 2
            case 6:
                try await Self.ignoringTransientFailures { try await device.engine.sendChanges() }
            case 7:
                try await Self.ignoringTransientFailures { try await device.engine.fetchChanges() }
            default:
                switch Int.random(in: 0..<5, using: &random) {
                case 0: cloud.failNextRequests(1, with: .networkFailure)
                case 1: cloud.loseNextResponses(1, operations: [.modifyRecords])
                case 2:
                    try await device.database.write { db in
                        try db.execute(sql: "DELETE FROM strata_sync.state WHERE key LIKE 'token.%'")
                    }
                case 3: cloud.reorderNextFetches(Int.random(in: 1...3, using: &random))
                default: break
                }
                try await Self.ignoringTransientFailures { try await device.engine.syncChanges() }
            }
        }
        // Settle: a few rounds meet the faults still armed; the rest are cleared (a round
        // consumes one lost response per device with something to send, so many armed ones
        // would outlast any fixed number of rounds), then every device sends what it has and
        // every device fetches what the others sent.
        for _ in 0..<2 {
            for device in devices { try await Self.ignoringTransientFailures { try await device.engine.syncChanges() } }
        }
        cloud.clearInjectedFaults()
        for device in devices { try await device.engine.syncChanges() }
        for device in devices { try await device.engine.fetchChanges() }
        let want = expected.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        for device in devices {
            let rows = try await device.strings("SELECT id || ' ' || score FROM games ORDER BY id")
            let quarantined = try await device.strings("SELECT recordName || ': ' || error FROM strata_sync.quarantined_records")
            let waiting = try await device.strings("SELECT recordName || ': ' || reason FROM strata_sync.unsynced_records")
            #expect(rows == want, "seed \(seed): \(device.id); quarantined \(quarantined), waiting \(waiting)")
            #expect(try await device.pending() == 0, "seed \(seed): \(device.id) has changes pending")
        }
    }
}
