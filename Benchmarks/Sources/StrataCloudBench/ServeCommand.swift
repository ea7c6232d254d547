import BenchSupport
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import StrataCloudService
import StrataCloudStore

/// `strata-cloud-bench serve DATABASE-URL`: one `strata-cloud` instance (`CloudService` over a
/// `CloudStore`) on an ephemeral loopback port, in a process of its own. Prints `port N` once it
/// listens; on SIGTERM (or when the parent closes our standard input) it shuts down gracefully
/// and prints `peak_rss_kb N`, its peak resident memory.
enum ServeCommand {
    static func run(databaseURL: URL) async throws {
        exitWhenParentGoes()
        let logger = CloudSetup.logger
        let client = PostgresClient(configuration: CloudSetup.configuration(databaseURL), backgroundLogger: logger)
        let store = CloudStore(client: client, logger: logger)
        var configuration = CloudServiceConfiguration(host: "127.0.0.1", port: 0, jwtKey: CloudSetup.key, logger: logger)
        if let pageSize = CloudSetup.fetchPageSize { configuration.maximumFetchPageSize = pageSize }
        let service = CloudService(configuration: configuration) { store.container(for: $0) }
        let group = ServiceGroup(
            services: [client, service], gracefulShutdownSignals: [.sigterm], cancellationSignals: [], logger: logger)
        let running = Task { try await group.run() }
        // A no-op here (the parent migrated), as a deployment calls it at every start.
        try await store.migrate()
        report("port", try await service.listeningPort())
        try await running.value
        report("peak_rss_kb", ResidentMemory.peakBytes / 1024)
    }
}
