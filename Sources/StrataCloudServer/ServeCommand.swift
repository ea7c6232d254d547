import ArgumentParser
import Foundation
import PostgresNIO
import ServiceLifecycle
import StrataCloud
import StrataCloudService
import StrataCloudStore

/// `strata-cloud serve`: the HTTP service over the store. Stateless: run as many as you like on
/// one PostgreSQL database; each hears every commit through LISTEN/NOTIFY. SIGTERM and SIGINT
/// shut it down gracefully.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the sync service.")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var logging: LoggingOptions

    @Option(help: "The address to listen on (default: $STRATA_HOST or 127.0.0.1).")
    var host: String?

    @Option(help: "The port to listen on; 0 picks a free one (default: $STRATA_PORT or 8080).")
    var port: Int?

    @Option(name: .customLong("jwt-key"), help: "The HS256 secret of bearer tokens (default: $STRATA_JWT_KEY).")
    var jwtKey: String?

    @Option(help: "Records saved, deleted or fetched in one request.")
    var maximumItemsPerRequest = 400

    @Option(help: "Encoded bytes of the records saved in one request.")
    var maximumBytesPerRequest = 2_000_000

    @Option(help: "Stored bytes of one user's records and assets (no quota when absent).")
    var maximumBytesPerUser: Int64?

    @Option(help: "Bytes of one request body; larger bodies get limitExceeded before they are read.")
    var maximumBodyBytes = 64 * 1024 * 1024

    @Option(help: "The most records one page of a zone's changes holds; a larger limit gets pages of this size.")
    var maximumFetchPageSize = 2_000

    @Option(help: "Zones in one saveZones or deleteZones.")
    var maximumZonesPerRequest = 100

    @Option(help: "Participants in one saveShare.")
    var maximumParticipantsPerShare = 100

    @Option(help: "Hashes in one missingAssets, assets in one uploadAssets.")
    var maximumHashesPerRequest = 1_000

    @Option(help: "Uncompressed bytes of one uploaded asset.")
    var maximumAssetBytes: Int64 = 1 << 30

    @Option(help: "Change streams one user may hold open at once.")
    var maximumChangeStreamsPerUser = 16

    @Option(help: "Seconds a request may take before it is answered with serviceUnavailable (retry later).")
    var requestDeadline = 30.0

    @Option(help: "Seconds graceful shutdown may take (SIGTERM, SIGINT) before whatever still runs is cancelled.")
    var shutdownTimeout = 10.0

    func validate() throws {
        for (name, value) in [
            ("maximum-items-per-request", maximumItemsPerRequest), ("maximum-bytes-per-request", maximumBytesPerRequest),
            ("maximum-body-bytes", maximumBodyBytes), ("maximum-fetch-page-size", maximumFetchPageSize),
            ("maximum-zones-per-request", maximumZonesPerRequest), ("maximum-participants-per-share", maximumParticipantsPerShare),
            ("maximum-hashes-per-request", maximumHashesPerRequest), ("maximum-change-streams-per-user", maximumChangeStreamsPerUser),
        ] where value < 1 {
            throw ValidationError("--\(name) must be at least 1.")
        }
        guard maximumAssetBytes >= 0 else { throw ValidationError("--maximum-asset-bytes must not be negative.") }
        guard maximumFetchPageSize <= CloudStore.maximumPageSize else {
            throw ValidationError("--maximum-fetch-page-size must be at most \(CloudStore.maximumPageSize).")
        }
        for (name, seconds) in [("request-deadline", requestDeadline), ("shutdown-timeout", shutdownTimeout)]
        where !(seconds > 0 && seconds <= 86_400) {
            throw ValidationError("--\(name) must be between 0 and 86400 seconds.")
        }
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let logger = try logging.logger("strata.cloud")
        guard let key = jwtKey ?? environment["STRATA_JWT_KEY"], !key.isEmpty else {
            throw ValidationError("Give the token secret with --jwt-key or STRATA_JWT_KEY.")
        }
        guard key.utf8.count >= CloudServiceTokens.minimumKeyBytes else {
            throw ValidationError("The token secret must be at least \(CloudServiceTokens.minimumKeyBytes) bytes.")
        }
        let limits = CloudLimits(
            maximumItemsPerRequest: maximumItemsPerRequest, maximumBytesPerRequest: maximumBytesPerRequest,
            maximumBytesPerUser: maximumBytesPerUser)
        let client = PostgresClient(configuration: try database.clientConfiguration(), backgroundLogger: logger)
        let store = CloudStore(client: client, limits: limits, logger: logger)
        var configuration = CloudServiceConfiguration(
            host: host ?? environment["STRATA_HOST"] ?? "127.0.0.1",
            port: try port ?? environment["STRATA_PORT"].map(Self.port) ?? 8080,
            jwtKey: key, limits: limits, maximumBodyBytes: maximumBodyBytes, logger: logger)
        configuration.maximumFetchPageSize = maximumFetchPageSize
        configuration.maximumZonesPerRequest = maximumZonesPerRequest
        configuration.maximumParticipantsPerShare = maximumParticipantsPerShare
        configuration.maximumHashesPerRequest = maximumHashesPerRequest
        configuration.maximumAssetBytes = maximumAssetBytes
        configuration.maximumChangeStreamsPerUser = maximumChangeStreamsPerUser
        configuration.requestDeadline = .milliseconds(Int64(requestDeadline * 1000))
        let service = CloudService(configuration: configuration) { user in
            store.container(for: user)
        }
        let announcer = ListeningAnnouncer(service: service)
        var groupConfiguration = ServiceGroupConfiguration(
            services: [
                .init(service: client),
                .init(service: announcer, successTerminationBehavior: .ignore),
                .init(service: service),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        // Graceful shutdown lets requests in flight finish, which the request deadline bounds;
        // past this, what still runs is cancelled, and past the same again the group gives up.
        groupConfiguration.maximumGracefulShutdownDuration = .milliseconds(Int64(shutdownTimeout * 1000))
        groupConfiguration.maximumCancellationDuration = .milliseconds(Int64(shutdownTimeout * 1000))
        let group = ServiceGroup(configuration: groupConfiguration)
        try await group.run()
    }

    static func port(_ text: String) throws -> Int {
        guard let port = Int(text), (0...65535).contains(port) else { throw ValidationError("\(text) is not a port.") }
        return port
    }
}

/// Prints the port once the service listens: with `--port 0`, scripts and tests read it from
/// the first line of standard output.
struct ListeningAnnouncer: Service {
    let service: CloudService

    func run() async throws {
        let port = try await service.listeningPort()
        // Straight to the file descriptor: `print` buffers when standard output is a pipe.
        FileHandle.standardOutput.write(Data("strata-cloud listening on port \(port)\n".utf8))
    }
}
