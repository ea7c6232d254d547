import BenchSupport
import Foundation
import StrataSync

/// The first sync over links as long as real networks' (``LatencyLink``): what loopback hides.
/// On loopback a request's round trip is a fraction of a millisecond, so the engine's
/// pipelining (two batches in flight on the way up, pages asked for two ahead on the way
/// down) is never tested against a wait. For each round trip, device A sends `rows` rows
/// (encrypted, as engines do by default) through the link, and a new device B fetches them.
///
/// The link's round trip is checked first: the median of eleven `currentUser()` requests
/// through it, less the median of eleven straight to the service.
enum LatencyPhase {
    static func run(databaseURL: URL, rows: Int, roundTrips: [Int], runID: String, results: inout Results) async throws {
        let trips = roundTrips.map { "\($0) ms" }.joined(separator: ", ")
        print("first sync over a long link: \(rows) rows, round trips of \(trips) added to loopback")
        let folder = try makeTemporaryFolder("latency")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let instance = try await CloudInstance.start(databaseURL: databaseURL)
        let clock = ContinuousClock()
        let key = "latency-\(runID)"
        for roundTrip in roundTrips {
            let link = try await LatencyLink.start(to: instance.baseURL, roundTrip: .milliseconds(roundTrip))
            let user = "latency-\(runID)-\(roundTrip)"
            let container = CloudSetup.container(link.baseURL, user: user)
            func medianRequest(_ container: some CloudContainer) async throws -> Double {
                var times: [Double] = []
                for _ in 0..<11 { times.append(seconds(try await clock.measure { _ = try await container.currentUser() })) }
                return EnginePhase.median(times)
            }
            let measured = try await medianRequest(container) - medianRequest(CloudSetup.container(instance.baseURL, user: user))
            let (upload, download) = try await FirstSyncPhase.syncOnce(
                rows: rows, key: key, container: container, folder: folder, names: "\(roundTrip)")
            try await link.stop()
            results.add("link_\(roundTrip)ms_measured_round_trip_ms", measured * 1_000, "ms")
            results.add("first_sync_upload_rows_per_s_rtt_\(roundTrip)ms", Double(rows) / upload, "rows/s")
            results.add("first_sync_download_rows_per_s_rtt_\(roundTrip)ms", Double(rows) / download, "rows/s")
        }
        _ = try await instance.stop()
    }
}
