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
        let container = cloud.container(user: "engine-push")
        let phone = try await CloudSetup.device("phone", folder: folder, container: container)
        let laptop = try await CloudSetup.device("laptop", folder: folder, container: container)
        try await phone.database.write { db in try StrataRowWriter.insert(0..<max(1, rows), key: "warm", in: db) }
        try await phone.engine.sendChanges()
        try await laptop.engine.fetchChanges()
        var latencies: [Double] = []
        let clock = ContinuousClock()
        for sample in -5..<samples {
            let key = "push-\(sample)"
            let started = clock.now
            try await phone.database.write { db in try StrataRowWriter.insert(0..<1, key: key, in: db) }
            try await phone.engine.sendChanges()
            try await laptop.engine.fetchChanges()
            let visible = try await laptop.database.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM projects WHERE id = ?", arguments: ["\(key)-0"]) == 1
            }
            guard visible else { throw BenchFailure("engine push: row \(key) did not arrive") }
            if sample >= 0 { latencies.append(seconds(clock.now - started) * 1_000) }
        }
        phone.database.close()
        laptop.database.close()
        results.add("push_engines_alone_p50_ms", PushPhase.percentile(latencies.sorted(), 0.50), "ms")
    }
}
