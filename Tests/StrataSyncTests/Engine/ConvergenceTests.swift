import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// Three devices make seeded random edits over two related tables, interleaved with random
/// syncs and injected faults (dropped requests, lost responses, rate limits, duplicated
/// deliveries, reordered pages); every seed must end with the devices equal, nothing pending, and
/// every row that no device ever deleted present everywhere.
@Suite(.timeLimit(.minutes(5))) struct ConvergenceTests {
    /// Request sizes that break things: 1, 2, a few, and the default.
    static let batchSizes = [1, 2, 3, 5, 8, 400]

    @Test(arguments: 1...200)
    func devicesConverge(seed: UInt64) async throws {
        do {
            try await converge(seed: seed)
        } catch {
            Issue.record("seed \(seed) failed: \(error)")
        }
    }

    func converge(seed: UInt64) async throws {
        var random = SeededGenerator(state: seed)
        let cloud = MockCloud()
        let time = ManualWallClock()
        var devices: [SyncTestDevice] = []
        for index in 0..<3 {
            devices.append(
                try await SyncTestDevice(
                    "device\(index)", cloud: cloud, time: time,
                    batchSize: Self.batchSizes.randomElement(using: &random) ?? 400,
                    fetchPageSize: Int.random(in: 1...5, using: &random)))
        }
        var deleted: Set<String> = []
        var created: [String] = []
        var gameOfPlayer: [String: String] = [:]
        for step in 0..<60 {
            let device = devices[Int.random(in: 0..<3, using: &random)]
            time.advance(by: Int64.random(in: -500...1_500, using: &random))
            switch Int.random(in: 0..<13, using: &random) {
            case 0, 1:
                let id = "g\(seed)-\(step)"
                try await device.execute("INSERT INTO games (id, title, score) VALUES ('\(id)', 'game \(step)', \(step))")
                created.append("game \(id)")
            case 2, 3:
                let local = try await device.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM games") }
                guard let game = local.randomElement(using: &random) else { continue }
                let id = "p\(seed)-\(step)"
                try await device.execute("INSERT INTO players (id, gameID, name) VALUES ('\(id)', '\(game)', 'player \(step)')")
                created.append("player \(id)")
                gameOfPlayer["player \(id)"] = "game \(game)"
            case 4, 5:
                let local = try await device.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM games") }
                guard let game = local.randomElement(using: &random) else { continue }
                let column = Bool.random(using: &random) ? "title = 'title \(step)'" : "score = \(step)"
                try await device.execute("UPDATE games SET \(column) WHERE id = '\(game)'")
            case 6:
                let local = try await device.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM players") }
                guard let player = local.randomElement(using: &random) else { continue }
                try await device.execute("UPDATE players SET name = 'renamed \(step)' WHERE id = '\(player)'")
            case 7:
                let local = try await device.database.read { db in
                    try String.fetchAll(db, sql: "SELECT 'game ' || id FROM games UNION ALL SELECT 'player ' || id FROM players")
                }
                guard let victim = local.randomElement(using: &random) else { continue }
                let parts = victim.split(separator: " ")
                let table = parts[0] == "game" ? "games" : "players"
                try await device.execute("DELETE FROM \(table) WHERE id = '\(parts[1])'")
                deleted.insert(victim)
            case 10, 11:
                // A large transaction mixing parents and children: a new game and its players,
                // players added to existing games, existing games edited; then, often, the
                // new game edited after its children (it now sorts after them).
                let local = try await device.database.read { db in try String.fetchAll(db, sql: "SELECT id FROM games") }
                let game = "g\(seed)-\(step)"
                let children = Int.random(in: 1...12, using: &random)
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
        var rows: [[String]] = []
        for device in devices { rows.append(try await device.rows()) }
        #expect(
            rows[0] == rows[1] && rows[1] == rows[2],
            "seed \(seed) diverged:\n\(rows.map { $0.joined(separator: "\n") }.joined(separator: "\n---\n"))")
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
