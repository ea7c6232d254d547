import ArgumentParser
import Foundation
import PostgresNIO
import ServiceLifecycle
import StrataCloudService
import StrataCloudStore
import StrataSync

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

    @Option(help: "Encoded bytes of one user's records (no quota when absent).")
    var maximumBytesPerUser: Int64?

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
        let service = CloudService(
            configuration: CloudServiceConfiguration(
                host: host ?? environment["STRATA_HOST"] ?? "127.0.0.1",
                port: try port ?? environment["STRATA_PORT"].map(Self.port) ?? 8080,
                jwtKey: key, limits: limits, logger: logger)
        ) { user in
            store.container(for: user)
        }
        let announcer = ListeningAnnouncer(service: service)
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: client),
                    .init(service: announcer, successTerminationBehavior: .ignore),
                    .init(service: service),
                ],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
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
