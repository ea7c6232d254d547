import StrataSQLite
@testable import StrataSync
import Testing

/// Three devices make seeded random edits over two related tables, interleaved with random
/// syncs and injected faults (dropped requests, lost responses, rate limits, duplicated
/// deliveries, reordered pages); every seed must end with the devices equal, nothing pending, and
/// every row that no device ever deleted present everywhere.
@Suite struct ConvergenceTests {
    /// SplitMix64: small, seedable, the same on every platform.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test(arguments: 1...50)
    func devicesConverge(seed: UInt64) async throws {
        var random = SeededGenerator(state: seed)
        let cloud = MockCloud()
        let time = ManualWallClock()
        let devices = try (0..<3).map { index in
            try SyncTestDevice("device\(index)", cloud: cloud, time: time, fetchPageSize: Int.random(in: 1...5, using: &random))
        }
        var deleted: Set<String> = []
        var created: [String] = []
        var gameOfPlayer: [String: String] = [:]
        for step in 0..<60 {
            let device = devices[Int.random(in: 0..<3, using: &random)]
            time.advance(by: Int64.random(in: -500...1_500, using: &random))
            switch Int.random(in: 0..<10, using: &random) {
            case 0, 1:
                let id = "g\(seed)-\(step)"
                try device.execute("INSERT INTO games (id, title, score) VALUES ('\(id)', 'game \(step)', \(step))")
                created.append("game \(id)")
            case 2, 3:
                let local = try await device.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM games") }
                guard let game = local.randomElement(using: &random) else { continue }
                let id = "p\(seed)-\(step)"
                try device.execute("INSERT INTO players (id, gameID, name) VALUES ('\(id)', '\(game)', 'player \(step)')")
                created.append("player \(id)")
                gameOfPlayer["player \(id)"] = "game \(game)"
            case 4, 5:
                let local = try await device.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM games") }
                guard let game = local.randomElement(using: &random) else { continue }
                let column = Bool.random(using: &random) ? "title = 'title \(step)'" : "score = \(step)"
                try device.execute("UPDATE games SET \(column) WHERE id = '\(game)'")
            case 6:
                let local = try await device.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM players") }
                guard let player = local.randomElement(using: &random) else { continue }
                try device.execute("UPDATE players SET name = 'renamed \(step)' WHERE id = '\(player)'")
            case 7:
                let local = try await device.database.read { db in
                    try String.fetchAll(db, sql: "SELECT 'game ' || id FROM games UNION ALL SELECT 'player ' || id FROM players")
                }
                guard let victim = local.randomElement(using: &random) else { continue }
                let parts = victim.split(separator: " ")
                let table = parts[0] == "game" ? "games" : "players"
                try device.execute("DELETE FROM \(table) WHERE id = '\(parts[1])'")
                deleted.insert(victim)
            default:
                switch Int.random(in: 0..<7, using: &random) {
                case 0: cloud.failNextRequests(1, with: .networkFailure)
                case 1: cloud.loseNextResponses(1, operations: [.modifyRecords])
                case 2: cloud.failNextRequests(1, with: .requestRateLimited(retryAfter: .seconds(1)))
                case 3:
                    // A duplicated delivery: the device forgets its tokens and fetches everything again.
                    try await device.database.write { db in
                        try db.execute(sql: "DELETE FROM strata_sync.state WHERE key LIKE 'token.%'")
                    }
                case 4:
                    // Reordered fetches: pages arrive back to front, children before parents.
                    cloud.reorderNextFetches(Int.random(in: 1...3, using: &random))
                default: break
                }
                do {
                    try await device.engine.syncChanges()
                } catch let error as CloudError where error.isTransient {
                    // Dropped request or lost response: the next sync retries.
                }
            }
        }
        // Settle: faults injected but not yet hit are consumed here, and retried.
        for _ in 0..<6 {
            for device in devices {
                do {
                    try await device.engine.syncChanges()
                } catch let error as CloudError where error.isTransient {}
            }
        }
        for device in devices { try await device.engine.syncChanges() }
        let rows = try devices.map { try $0.rows() }
        #expect(rows[0] == rows[1] && rows[1] == rows[2], "seed \(seed) diverged:\n\(rows.map { $0.joined(separator: "\n") }.joined(separator: "\n---\n"))")
        for device in devices {
            #expect(try await device.pending() == 0, "seed \(seed): \(device.engine.deviceID) has changes pending")
        }
        // A row no device deleted (nor its game) must have survived everywhere.
        let surviving = Set(rows[0].map { $0.split(separator: " ").prefix(2).joined(separator: " ") })
        for row in created where !deleted.contains(row) {
            // A player goes with its game (ON DELETE CASCADE).
            if let game = gameOfPlayer[row], deleted.contains(game) { continue }
            #expect(surviving.contains(row), "seed \(seed): \(row) was never deleted but is gone")
        }
    }
}
