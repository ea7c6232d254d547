import BenchSupport
import Foundation

/// A `strata-cloud` instance in a child process (`serve`), seen from the parent.
struct CloudInstance {
    let child: ChildProcess
    let baseURL: URL

    /// Starts an instance over the (migrated) database at `databaseURL`; returns once it listens.
    static func start(databaseURL: URL, name: String = "strata-cloud") async throws -> CloudInstance {
        let child = try ChildProcess(name: name, arguments: ["serve", databaseURL.absoluteString])
        let port = try await child.value("port")
        guard let baseURL = URL(string: "http://127.0.0.1:\(port)") else { throw BenchFailure("\(name) reported port \(port)") }
        return CloudInstance(child: child, baseURL: baseURL)
    }

    /// Shuts the instance down; its peak resident memory, in MB.
    func stop() async throws -> Double {
        try await child.stop()
        return try await child.number("peak_rss_kb") / 1024
    }
}
