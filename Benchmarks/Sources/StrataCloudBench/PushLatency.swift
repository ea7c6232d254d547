import Foundation
import StrataSQLite

/// From a commit on device A to the row being visible on device B: A sends, the service hears
/// the commit through LISTEN/NOTIFY and pushes a hint down B's change stream, B fetches.
enum PushLatency {
    static func run(_ bench: CloudBench, samples: Int) async throws {
        let (phone, phoneEngine) = try bench.device("phone", user: "push")
        let (laptop, laptopEngine) = try bench.device("laptop", user: "push")
        // Both zones exist and the stream is connected before the clock starts.
        try await phone.write { db in try db.execute(sql: "INSERT INTO items (id, title, score) VALUES ('warm', 'w', 0)") }
        try await phoneEngine.sendChanges()
        try await laptopEngine.fetchChanges()
        var hints = bench.container(user: "push-\(bench.runId)").changeHints().makeAsyncIterator()
        _ = await hints.next()

        var latencies: [Double] = []
        let clock = ContinuousClock()
        for sample in 0..<samples {
            let started = clock.now
            try await phone.write { db in
                try db.execute(sql: "INSERT INTO items (id, title, score) VALUES (?, 'x', ?)", arguments: ["push-\(sample)", sample])
            }
            try await phoneEngine.sendChanges()
            var visible = false
            while !visible {
                guard await hints.next() != nil else { throw CloudBenchError.streamEnded }
                try await laptopEngine.fetchChanges()
                visible = try await laptop.read { db in
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM items WHERE id = ?", arguments: ["push-\(sample)"]) == 1
                }
            }
            latencies.append(seconds(clock.now - started) * 1_000)
        }
        latencies.sort()
        let median = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, Int(Double(latencies.count) * 0.99))]
        print(
            String(format: "push latency, commit on A to row visible on B, %d samples: median %.1f ms, p99 %.1f ms", samples, median, p99))
    }
}

enum CloudBenchError: Error {
    case streamEnded
}
