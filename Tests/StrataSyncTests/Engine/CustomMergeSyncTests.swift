import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// A column merged by the app's own function through the engine: with a commutative,
/// associative, idempotent function (the union of comma lists, the maximum), devices that
/// change the column apart converge on the function of all their values, in any order.
@Suite(.timeLimit(.minutes(5))) struct CustomMergeSyncTests {
    /// The union of two comma lists, sorted: commutative, associative and idempotent.
    static let union = MergePolicy.custom(table: "games", column: "title") { local, incoming in
        .text(Self.union(local.value, incoming.value))
    }
    /// The greater of two integers (NULL loses).
    static let maximum = MergePolicy.custom(table: "games", column: "score") { local, incoming in
        switch (local.value, incoming.value) {
        case (.integer(let a), .integer(let b)): .integer(max(a, b))
        case (.null, let other), (let other, .null): other
        default: incoming.value
        }
    }

    static func items(_ value: DatabaseValue) -> Set<Substring> {
        guard case .text(let text) = value else { return [] }
        return Set(text.split(separator: ",").filter { !$0.isEmpty })
    }

    static func union(_ a: DatabaseValue, _ b: DatabaseValue) -> String {
        items(a).union(items(b)).sorted().joined(separator: ",")
    }

    @Test func twoDevicesConvergeOnTheUnionAndTheMaximum() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, time: time, mergePolicies: [Self.union, Self.maximum])
        let b = try await SyncTestDevice("b", cloud: cloud, time: time, mergePolicies: [Self.union, Self.maximum])
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'red', 1)")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await a.execute("UPDATE games SET title = title || ',blue', score = 9 WHERE id = 'g1'")
        try await b.execute("UPDATE games SET title = title || ',green', score = 4 WHERE id = 'g1'")  // later, smaller
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        for device in [a, b] {
            #expect(try await device.rows() == ["game g1 'blue,green,red' 9"])
            #expect(try await device.pending() == 0)
        }
    }

    @Test(arguments: 1...40)
    func threeDevicesConvergeOnTheUnionOfEveryItem(seed: UInt64) async throws {
        var random = SeededGenerator(state: seed)
        let cloud = MockCloud()
        let time = ManualWallClock()
        var devices: [SyncTestDevice] = []
        for index in 0..<3 {
            devices.append(
                try await SyncTestDevice(
                    "device\(index)", cloud: cloud, time: time, fetchPageSize: Int.random(in: 1...3, using: &random),
                    mergePolicies: [Self.union, Self.maximum]))
        }
        try await devices[0].execute("INSERT INTO games (id, title, score) VALUES ('g1', 'start', 0)")
        try await devices[0].engine.syncChanges()
        var added: Set<Substring> = ["start"]
        var highest: Int64 = 0
        for step in 0..<40 {
            let device = devices[Int.random(in: 0..<3, using: &random)]
            time.advance(by: Int64.random(in: -500...1_500, using: &random))
            switch Int.random(in: 0..<6, using: &random) {
            case 0, 1, 2:
                guard try await !device.strings("SELECT id FROM games").isEmpty else { continue }
                let item = "i\(step)"
                let score = Int64.random(in: 0...100, using: &random)
                // Each device only raises the maximum: a device lowering its own value is a local
                // edit the maximum cannot undo, and would make the oracle wrong.
                try await device.execute(
                    "UPDATE games SET title = title || ',\(item)', score = max(coalesce(score, 0), \(score)) WHERE id = 'g1'")
                added.insert(Substring(item))
                highest = max(highest, score)
            case 3:
                cloud.loseNextResponses(1, operations: [.modifyRecords])
                try await CounterConvergenceTests.ignoringTransientFailures { try await device.engine.syncChanges() }
            default:
                try await CounterConvergenceTests.ignoringTransientFailures { try await device.engine.syncChanges() }
            }
        }
        for _ in 0..<4 {
            for device in devices { try await CounterConvergenceTests.ignoringTransientFailures { try await device.engine.syncChanges() } }
        }
        for device in devices { try await device.engine.syncChanges() }
        let want = "game g1 '\(added.sorted().joined(separator: ","))' \(highest)"
        for device in devices {
            let rows = try await device.rows()
            #expect(rows == [want], "seed \(seed): \(device.id)")
            #expect(try await device.pending() == 0, "seed \(seed): \(device.id) has changes pending")
        }
    }
}
