import BenchSupport
import Foundation
import StrataSQLite
import StrataSync

/// Target 3: the engine alone, with `MockCloud` in memory (no service, no PostgreSQL), against
/// inserting the same rows through Strata into identical unsynced tables (`plain_projects`,
/// `plain_tasks`) of the same kind of file:
/// - capture: the inserts into synced tables (capture triggers log each row) ÷ the same inserts
///   into the unsynced ones; three interleaved rounds, medians, so that a slow moment of the
///   machine does not land on one side only;
/// - upload: `sendChanges()` of the rows from a fresh device ÷ the insert;
/// - apply: `fetchChanges()` of them on a second device ÷ the insert (upload and apply: medians
///   of three rounds, each with a cloud and devices of its own);
/// - storage: the receiving device's data file and metadatabase, in bytes a row.
/// strata-bench's `sync` workload measures the same on a one-table schema.
enum EnginePhase {
    static func run(rows: Int, results: inout Results) async throws {
        print("engine alone: \(rows) rows against MockCloud, each ÷ a plain insert of the same rows")
        let folder = try makeTemporaryFolder("engine")
        // STRATA_BENCH_KEEP=1 keeps the devices' files, to look into them afterwards.
        let keep = ProcessInfo.processInfo.environment["STRATA_BENCH_KEEP"] == "1"
        defer { if !keep { try? FileManager.default.removeItem(atPath: folder) } }
        if keep { print("keeping \(folder)") }
        let clock = ContinuousClock()
        let cloud = MockCloud()

        let pool = try DatabasePool(path: folder + "/capture.sqlite")
        try await pool.write { db in try db.execute(sql: BenchRows.schema() + BenchRows.schema(prefix: "plain_")) }
        // Installs capture on the synced tables; this engine never sends.
        let capturing = try SyncEngine(
            for: pool, tableNames: BenchRows.tableNames, container: cloud.container(user: "capture"),
            configuration: SyncEngineConfiguration(deviceID: CloudSetup.deviceID("capture"), schedule: nil), logger: CloudSetup.logger,
            startImmediately: false)
        var plain: [Double] = []
        var captured: [Double] = []
        for round in 0..<3 {
            let key = "round-\(round)"
            plain.append(seconds(try await clock.measure { try await insert(rows, key: key, prefix: "plain_", into: pool) }))
            captured.append(seconds(try await clock.measure { try await insert(rows, key: key, prefix: "", into: pool) }))
        }
        _ = capturing
        pool.close()
        let insertTime = median(plain)

        // Three rounds of each, unencrypted and encrypted (the default) alternating, so that a slow
        // moment of the machine does not land on one side only (single runs spread by ±25 %):
        // medians. Each round has a cloud and devices of its own, whose files go when it ends.
        var sealedRuns: [Round] = []
        var unsealedRuns: [Round] = []
        for round in 0..<3 {
            unsealedRuns.append(try await uploadAndApply(rows, folder: folder, name: "false-\(round)", encrypted: false, keep: keep))
            sealedRuns.append(try await uploadAndApply(rows, folder: folder, name: "true-\(round)", encrypted: true, keep: keep))
        }
        let (upload, apply) = (median(sealedRuns.map(\.upload)), median(sealedRuns.map(\.apply)))
        let unencrypted = (upload: median(unsealedRuns.map(\.upload)), apply: median(unsealedRuns.map(\.apply)))
        // Every round's receiving device stores the same rows: the first sealed one's files.
        let storage = sealedRuns[0]
        let cInsert = seconds(try clock.measure { try SQLiteCRowWriter.insert(rows: rows, key: "c", path: folder + "/c.sqlite") })

        results.add("engine_upload_vs_insert", upload / insertTime, "x")
        results.add("engine_apply_vs_insert", apply / insertTime, "x")
        results.add("capture_vs_insert", median(captured) / insertTime, "x")
        results.add("engine_insert_s", insertTime, "s")
        results.add("engine_capture_insert_s", median(captured), "s")
        results.add("engine_upload_s", upload, "s")
        results.add("engine_apply_s", apply, "s")
        results.add("engine_sqlite_c_insert_s", cInsert, "s")
        results.add("encryption_engine_upload_cost_percent", (upload / unencrypted.upload - 1) * 100, "%")
        results.add("encryption_engine_apply_cost_percent", (apply / unencrypted.apply - 1) * 100, "%")
        // The receiving device's files: the rows, and what the engine keeps beside them.
        results.add("engine_data_file_bytes_per_row", Double(storage.dataFileBytes) / Double(rows), "B")
        results.add("engine_metadatabase_bytes_per_row", Double(storage.metadatabaseBytes) / Double(rows), "B")
    }

    private static func fileSize(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        guard let size = attributes[.size] as? Int else { throw BenchFailure("engine: no size for \(path)") }
        return size
    }

    /// What one round measured: seconds of the upload and the apply, and the receiving device's
    /// files in bytes once closed (their WAL checkpointed: what the device keeps on disk).
    struct Round {
        var upload: Double
        var apply: Double
        var dataFileBytes: Int
        var metadatabaseBytes: Int
    }

    /// One round: device A sends `rows` new rows to a cloud of their own, device B fetches them.
    /// The round's files are removed unless `keep`.
    private static func uploadAndApply(_ rows: Int, folder: String, name: String, encrypted: Bool, keep: Bool) async throws -> Round {
        let clock = ContinuousClock()
        let cloud = MockCloud()
        let user = "engine-\(name)"
        let sender = try await CloudSetup.device("a-\(name)", folder: folder, container: cloud.container(user: user), encrypted: encrypted)
        try await insert(rows, key: "engine", prefix: "", into: sender.database)
        let upload = seconds(try await clock.measure { try await sender.engine.sendChanges() })
        let receiver = try await CloudSetup.device(
            "b-\(name)", folder: folder, container: cloud.container(user: user), encrypted: encrypted)
        let apply = seconds(try await clock.measure { try await receiver.engine.fetchChanges() })
        let arrived = try await StrataRowWriter.count(in: receiver.database)
        guard arrived == rows else { throw BenchFailure("engine: device B has \(arrived) rows, device A \(rows)") }
        sender.database.close()
        receiver.database.close()
        func files(_ device: String, _ engine: SyncEngine) throws -> (dataFile: String, metadatabase: String) {
            let dataFile = "\(folder)/\(device)-\(name).sqlite"
            guard
                case .file(path: let metadatabase) = Metadatabase.location(
                    for: .file(path: dataFile), containerIdentifier: engine.container.identifier)
            else { throw BenchFailure("engine: no metadatabase file") }
            return (dataFile, metadatabase)
        }
        let (sent, received) = (try files("a", sender.engine), try files("b", receiver.engine))
        let round = Round(
            upload: upload, apply: apply, dataFileBytes: try fileSize(received.dataFile),
            metadatabaseBytes: try fileSize(received.metadatabase))
        if !keep {
            for file in [sent.dataFile, sent.metadatabase, received.dataFile, received.metadatabase] {
                try? FileManager.default.removeItem(atPath: file)
            }
        }
        return round
    }

    /// All rows in one transaction, as the capture comparison wants.
    private static func insert(_ rows: Int, key: String, prefix: String, into pool: DatabasePool) async throws {
        try await pool.write { db in try StrataRowWriter.insert(0..<rows, key: key, prefix: prefix, in: db) }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
