import BenchSupport
import Foundation
import StrataSync

/// Target 1: the first sync of N rows from device A through a `strata-cloud` instance to a new
/// device B, against a raw bulk load of the same rows in the same run: PostgreSQL `COPY` into
/// plain tables plus a prepared-statement insert into SQLite through the C API. The ratio is
/// (upload + download) ÷ (COPY + SQLite insert): what sync adds to putting the rows in both
/// places by hand.
enum FirstSyncPhase {
    static func run(databaseURL: URL, rows: Int, runID: String, results: inout Results) async throws {
        print("first sync: \(rows) rows (\(BenchRows.projectCount(rows)) projects, the rest tasks), A → service → new device B")
        let folder = try makeTemporaryFolder("first")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let instance = try await CloudInstance.start(databaseURL: databaseURL)
        let key = "first-\(runID)"
        let clock = ContinuousClock()
        // Unencrypted, then encrypted (the default), one after the other on the same instance,
        // each as its own user: what end-to-end encryption costs a first sync.
        var timings: [Bool: (upload: Double, download: Double)] = [:]
        for encrypted in [false, true] {
            let container = CloudSetup.container(instance.baseURL, user: "first-\(runID)-\(encrypted ? "sealed" : "plain")")
            timings[encrypted] = try await syncOnce(
                rows: rows, key: key, container: container, folder: folder, names: "\(encrypted)", encrypted: encrypted)
        }
        guard let sealed = timings[true], let plain = timings[false] else { throw BenchFailure("first sync: a run did not finish") }
        let (upload, download) = sealed
        let servicePeak = try await instance.stop()

        let suffix = runID
        let copy = try await CloudSetup.withClient(databaseURL) { client in
            try await PostgresCopyWriter.createTables(client, suffix: suffix, logger: CloudSetup.logger)
            let elapsed = seconds(
                try await clock.measure {
                    try await PostgresCopyWriter.copy(rows: rows, key: key, suffix: suffix, client: client, logger: CloudSetup.logger)
                })
            let copied = try await PostgresCopyWriter.count(client, suffix: suffix, logger: CloudSetup.logger)
            guard copied == rows else { throw BenchFailure("COPY left \(copied) rows, not \(rows)") }
            return elapsed
        }
        let sqlite = seconds(try clock.measure { try SQLiteCRowWriter.insert(rows: rows, key: key, path: folder + "/raw.sqlite") })

        results.add("first_sync_upload_rows_per_s", Double(rows) / upload, "rows/s")
        results.add("first_sync_download_rows_per_s", Double(rows) / download, "rows/s")
        results.add("first_sync_vs_raw_bulk", (upload + download) / (copy + sqlite), "x")
        results.add("first_sync_upload_s", upload, "s")
        results.add("first_sync_download_s", download, "s")
        results.add("raw_bulk_postgres_copy_s", copy, "s")
        results.add("raw_bulk_sqlite_insert_s", sqlite, "s")
        results.add("first_sync_service_peak_rss_mb", servicePeak, "MB")
        results.add("encryption_first_sync_cost_percent", ((upload + download) / (plain.upload + plain.download) - 1) * 100, "%")
        results.add("first_sync_unencrypted_upload_s", plain.upload, "s")
        results.add("first_sync_unencrypted_download_s", plain.download, "s")
    }

    /// Device A (`phone-<names>`) inserts `rows` rows and sends them through `container`, and a
    /// new device B (`laptop-<names>`) fetches them: the seconds of each, once B holds every row.
    static func syncOnce(
        rows: Int, key: String, container: any CloudContainer, folder: String, names: String,
        encrypted: Bool = CloudSetup.encryptsByDefault
    ) async throws -> (upload: Double, download: Double) {
        let clock = ContinuousClock()
        let phone = try await CloudSetup.device("phone-\(names)", folder: folder, container: container, encrypted: encrypted)
        let laptop = try await CloudSetup.device("laptop-\(names)", folder: folder, container: container, encrypted: encrypted)
        try await StrataRowWriter.insert(rows: rows, key: key, into: phone.database)
        let upload = seconds(try await clock.measure { try await phone.engine.sendChanges() })
        let download = seconds(try await clock.measure { try await laptop.engine.fetchChanges() })
        let arrived = try await StrataRowWriter.count(in: laptop.database)
        guard arrived == rows else { throw BenchFailure("first sync: device B has \(arrived) rows, device A \(rows)") }
        phone.database.close()
        laptop.database.close()
        return (upload, download)
    }
}
