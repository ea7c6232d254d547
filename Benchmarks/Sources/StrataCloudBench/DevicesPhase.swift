import BenchSupport
import Foundation
import PostgresNIO
import StrataSQLite
import StrataSync

/// Target 5: `devices` devices, each of a different user, sending `rowsPerDevice` new rows at
/// once, in records per second from the first send's start to the last one's end; on one
/// `strata-cloud` instance, then on two in front of the same PostgreSQL database (device i
/// talks to instance i mod 2). The store's record count for those users is checked after.
enum DevicesPhase {
    static func run(databaseURL: URL, devices: Int, rowsPerDevice: Int, runID: String, results: inout Results) async throws {
        for instanceCount in [1, 2] {
            print("devices: \(devices) devices × \(rowsPerDevice) rows sending at once, \(instanceCount) instance(s)")
            let rate = try await measure(
                databaseURL: databaseURL, instanceCount: instanceCount, devices: devices, rowsPerDevice: rowsPerDevice, runID: runID)
            results.add(instanceCount == 1 ? "devices_records_per_s" : "devices_records_per_s_two_instances", rate, "records/s")
        }
    }

    static func measure(databaseURL: URL, instanceCount: Int, devices: Int, rowsPerDevice: Int, runID: String) async throws -> Double {
        let folder = try makeTemporaryFolder("devices")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var instances: [CloudInstance] = []
        for index in 0..<instanceCount {
            instances.append(try await CloudInstance.start(databaseURL: databaseURL, name: "strata-cloud \(index + 1)"))
        }
        let prefix = "load\(instanceCount)-\(runID)-"
        var all: [(database: DatabasePool, engine: SyncEngine)] = []
        for index in 0..<devices {
            let container = CloudSetup.container(instances[index % instanceCount].baseURL, user: prefix + "\(index)")
            let device = try await CloudSetup.device("device-\(index)", folder: folder, container: container)
            try await StrataRowWriter.insert(rows: rowsPerDevice, key: "\(prefix)\(index)", into: device.database)
            all.append(device)
        }
        let engines = all.map(\.engine)
        let elapsed = try await ContinuousClock().measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for engine in engines {
                    group.addTask { try await engine.sendChanges() }
                }
                try await group.waitForAll()
            }
        }
        for device in all { device.database.close() }
        for instance in instances { _ = try await instance.stop() }

        let stored = try await CloudSetup.withClient(databaseURL) { client in
            let rows = try await client.query(
                // Only the rows: with end-to-end encryption each device also keeps its key records.
                PostgresQuery(
                    unsafeSQL:
                        "SELECT count(*) FROM strata_cloud.records WHERE owner LIKE '\(prefix)%' AND type IN ('projects', 'tasks')"),
                logger: CloudSetup.logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
        let total = devices * rowsPerDevice
        guard stored == total else { throw BenchFailure("devices: the store holds \(stored) records of \(total) sent") }
        return Double(total) / seconds(elapsed)
    }
}
