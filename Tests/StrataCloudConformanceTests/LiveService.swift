import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import StrataCloudClient
import StrataCloudService
import StrataCloudStore
import StrataSync
import Testing

/// The live stack a test configures itself: the store in a database of its own, the
/// `strata-cloud` service in front of it on loopback, and client containers talking HTTP.
final class LiveService: Sendable {
    static let key = "strata-live-service-key-0123456789abcdef"

    let store: CloudStore
    let client: PostgresClient
    let service: CloudService
    let baseURL: URL
    /// One container identifier per service (see `ServiceHarness.identifier`).
    let identifier = "strata.cloud.live.\(UUID().uuidString.prefix(8))"
    let group: ServiceGroup
    let running: Task<Void, any Error>
    private let runner: Task<Void, Never>
    /// The database this service made for itself, dropped when it stops; nil for one it was given.
    private let ownDatabase: String?

    private init(
        store: CloudStore, client: PostgresClient, service: CloudService, baseURL: URL, group: ServiceGroup,
        running: Task<Void, any Error>, runner: Task<Void, Never>, ownDatabase: String?
    ) {
        self.ownDatabase = ownDatabase
        self.store = store
        self.client = client
        self.service = service
        self.baseURL = baseURL
        self.group = group
        self.running = running
        self.runner = runner
    }

    /// A service over a new database on `STRATA_TEST_POSTGRES` (or on `server`, using its
    /// `database`).
    static func start(
        server: URL? = nil, database: String? = nil, limits: CloudLimits = CloudLimits(),
        configure: (inout CloudServiceConfiguration) -> Void = { _ in }
    ) async throws -> LiveService {
        let url = try #require(server ?? CloudKind.postgresURL)
        let name: String
        if let database {
            name = database
        } else {
            name = "live_\(UInt64.random(in: 0...UInt64.max))"
            try await AdminConnection.shared.createDatabase(name)
        }
        var logger = Logger(label: "strata.cloud.live")
        logger.logLevel = .critical
        var clientConfiguration = AdminConnection.configuration(url, database: name)
        clientConfiguration.options.connectTimeout = .seconds(2)
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        let runner = Task { await client.run() }
        let store = CloudStore(client: client, limits: limits, logger: logger)
        try await store.migrate()
        var configuration = CloudServiceConfiguration(host: "127.0.0.1", port: 0, jwtKey: key, limits: limits, logger: logger)
        configure(&configuration)
        let service = CloudService(configuration: configuration) { user in store.container(for: user) }
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        let running = Task { try await group.run() }
        let port = try await service.listeningPort()
        let baseURL = try #require(URL(string: "http://127.0.0.1:\(port)"))
        return LiveService(
            store: store, client: client, service: service, baseURL: baseURL, group: group, running: running, runner: runner,
            ownDatabase: database == nil ? name : nil)
    }

    /// Runs `body` with a started service and stops it however `body` ends.
    static func with<T: Sendable>(
        limits: CloudLimits = CloudLimits(), configure: (inout CloudServiceConfiguration) -> Void = { _ in },
        _ body: (LiveService) async throws -> T
    ) async throws -> T {
        let live = try await start(limits: limits, configure: configure)
        do {
            let result = try await body(live)
            try await live.stop()
            return result
        } catch {
            try? await live.stop()
            throw error
        }
    }

    /// A client container for `user`, signed in through the service.
    func container(user: String) -> CloudServiceContainer {
        CloudServiceContainer(
            baseURL: baseURL, token: { try await CloudServiceTokens.issue(user: user, key: Self.key) },
            identifier: identifier, reconnection: .init(initialDelay: .milliseconds(20)))
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
        runner.cancel()
        if let ownDatabase { await AdminConnection.shared.dropDatabase(ownDatabase) }
    }

    /// Stops the connection pool, once the service stopped by other means.
    func stopPool() {
        runner.cancel()
    }
}
