import BenchSupport
import Foundation
import StrataSQLite
import StrataSync

/// The engines' own share of a push: the push loop of ``PushPhase`` with `MockCloud` in
/// memory instead of the service, so what remains is the engines' work (their transactions,
/// the hops to and from each connection's queue, sealing and opening records).
enum EnginePushPhase {
    static func run(samples: Int, rows: Int, results: inout Results) async throws {
        print("push, engines alone: \(samples) samples against MockCloud, \(rows) rows held")
        let folder = try makeTemporaryFolder("engine-push")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let cloud = MockCloud()
        let devices = try await PushDevices(folder: folder, container: cloud.container(user: "engine-push"), rows: rows)
        defer { devices.close() }
        var latencies: [Double] = []
        let clock = ContinuousClock()
        for sample in -5..<samples {
            let key = "push-\(sample)"
            let started = clock.now
            try await devices.commitAndSend(key)
            try await devices.laptop.engine.fetchChanges()
            guard try await devices.arrived(key) else { throw BenchFailure("engine push: row \(key) did not arrive") }
            if sample >= 0 { latencies.append(seconds(clock.now - started) * 1_000) }
        }
        results.add("push_engines_alone_p50_ms", PushPhase.percentile(latencies.sorted(), 0.50), "ms")
    }
}
