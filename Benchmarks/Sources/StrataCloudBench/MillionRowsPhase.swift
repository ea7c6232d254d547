import BenchSupport
import Foundation

/// Target 2: a million rows (by default) complete, with the peak resident memory of the client
/// and of the service each in a process of its own: the service in a `serve` child, device A
/// (insert, then upload) in one `device` child and the new device B (download) in another.
/// The client's peak is the larger of the two devices'.
enum MillionRowsPhase {
    static func run(databaseURL: URL, rows: Int, runID: String, results: inout Results) async throws {
        print("million rows: \(rows) rows, service and each device in its own process")
        let instance = try await CloudInstance.start(databaseURL: databaseURL)
        let user = "million-\(runID)"
        let service = instance.baseURL.absoluteString
        // The two device processes are one user's devices: they share a key file (without it,
        // the new device could not open what the first sealed).
        defer { try? FileManager.default.removeItem(atPath: CloudSetup.sharedKeyFile(of: user)) }
        let upload = try ChildProcess(name: "upload device", arguments: ["device", "upload", service, user, "\(rows)", user])
        try await upload.waitForSuccess()
        let download = try ChildProcess(name: "download device", arguments: ["device", "download", service, user, "\(rows)", user])
        try await download.waitForSuccess()
        let servicePeak = try await instance.stop()

        let sent = try await upload.number("rows")
        let arrived = try await download.number("rows")
        guard Int(sent) == rows, Int(arrived) == rows else {
            throw BenchFailure("million rows: device A had \(Int(sent)) rows, device B has \(Int(arrived)), of \(rows)")
        }
        let uploadPeak = try await upload.number("peak_rss_kb") / 1024
        let downloadPeak = try await download.number("peak_rss_kb") / 1024
        results.add("million_rows_client_peak_rss_mb", max(uploadPeak, downloadPeak), "MB")
        results.add("million_rows_service_peak_rss_mb", servicePeak, "MB")
        results.add("million_rows_upload_client_peak_rss_mb", uploadPeak, "MB")
        results.add("million_rows_download_client_peak_rss_mb", downloadPeak, "MB")
        results.add("million_rows_upload_rows_per_s", Double(rows) / (try await upload.number("seconds")), "rows/s")
        results.add("million_rows_download_rows_per_s", Double(rows) / (try await download.number("seconds")), "rows/s")
    }
}
