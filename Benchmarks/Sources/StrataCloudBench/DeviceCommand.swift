import BenchSupport
import Foundation

/// `strata-cloud-bench device upload|download SERVICE-URL USER ROWS KEY`: one device in a
/// process of its own, so that the client's peak memory is its own. `upload` writes ROWS rows
/// of run KEY into a new database (untimed) and sends them; `download` is a new device of the
/// same user that fetches them. Prints `seconds` (the sync alone), `rows` (what the device
/// holds after it) and `peak_rss_kb` (the process's peak resident memory, inserts included).
enum DeviceCommand {
    static func run(_ arguments: [String]) async throws {
        guard arguments.count == 5, let serviceURL = URL(string: arguments[1]), let rows = Int(arguments[3]) else {
            throw BenchFailure("usage: strata-cloud-bench device upload|download SERVICE-URL USER ROWS KEY")
        }
        exitWhenParentGoes()
        let (role, user, key) = (arguments[0], arguments[2], arguments[4])
        let folder = try makeTemporaryFolder("device-\(role)")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let container = CloudSetup.container(serviceURL, user: user)
        let device = try await CloudSetup.device(
            role, folder: folder, container: container, keys: .file(atPath: CloudSetup.sharedKeyFile(of: user)))
        let clock = ContinuousClock()
        let elapsed: Duration
        switch role {
        case "upload":
            try await StrataRowWriter.insert(rows: rows, key: key, into: device.database)
            elapsed = try await clock.measure { try await device.engine.sendChanges() }
        case "download":
            elapsed = try await clock.measure { try await device.engine.fetchChanges() }
        default:
            throw BenchFailure("device role \(role): upload or download")
        }
        report("seconds", seconds(elapsed))
        report("rows", try await StrataRowWriter.count(in: device.database))
        device.database.close()
        report("peak_rss_kb", ResidentMemory.peakBytes / 1024)
    }
}
