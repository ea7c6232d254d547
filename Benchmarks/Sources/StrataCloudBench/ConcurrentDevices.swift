import Foundation
import StrataSQLite

/// Records per second the service sustains while `devices` devices of different users send at
/// once, each its own rows in batches of the engine's default size.
enum ConcurrentDevices {
    static func run(_ bench: CloudBench, devices: Int, rowsPerDevice: Int) async throws {
        let all = try (0..<devices).map { try bench.device("device-\($0)", user: "load-\($0)") }
        for (index, device) in all.enumerated() {
            try await device.database.write { db in
                for row in 0..<rowsPerDevice {
                    try db.execute(
                        sql: "INSERT INTO items (id, title, score) VALUES (?, ?, ?)", arguments: ["d\(index)-\(row)", "Row \(row)", row])
                }
            }
        }
        let clock = ContinuousClock()
        let elapsed = try await clock.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for device in all {
                    group.addTask { try await device.engine.sendChanges() }
                }
                try await group.waitForAll()
            }
        }
        let total = devices * rowsPerDevice
        print(
            String(
                format: "%d devices sending %d records each at once: %.2f s, %.0f records/s", devices, rowsPerDevice, seconds(elapsed),
                Double(total) / seconds(elapsed)))
    }
}
