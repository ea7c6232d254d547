import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import StrataCloudClient
import StrataCloudService
import StrataCloudStore
import StrataSQLite
import StrataSync

/// A fresh database with the store's schema, a `CloudService` over it on an ephemeral port,
/// and devices that sync through it.
struct CloudBench {
    static let key = "strata-cloud-bench-key-0123456789abcdef"
    static let schema = "CREATE TABLE items (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, score INTEGER NOT NULL)"

    let client: PostgresClient
    let store: CloudStore
    let group: ServiceGroup
    let running: Task<Void, any Error>
    let baseURL: URL
    let runId = UInt32.random(in: 0...UInt32.max)
    let logger: Logger

    static func start(serverURL: URL) async throws -> CloudBench {
        var logger = Logger(label: "strata.cloud.bench")
        logger.logLevel = .error
        let name = "strata_bench_\(UInt32.random(in: 0...UInt32.max))"
        let admin = PostgresClient(
            configuration: configuration(serverURL, database: String(serverURL.path.dropFirst())), backgroundLogger: logger)
        let adminRun = Task { await admin.run() }
        try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
        adminRun.cancel()
        var options = configuration(serverURL, database: name)
        options.options.maximumConnections = 40
        let client = PostgresClient(configuration: options, backgroundLogger: logger)
        let store = CloudStore(client: client, logger: logger)
        let service = CloudService(
            configuration: CloudServiceConfiguration(host: "127.0.0.1", port: 0, jwtKey: key, logger: logger)
        ) { store.container(for: $0) }
        let group = ServiceGroup(services: [client, service], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
        let running = Task { try await group.run() }
        try await store.migrate()
        let port = try await service.listeningPort()
        guard let baseURL = URL(string: "http://127.0.0.1:\(port)") else { throw CloudServiceError.notRunning }
        return CloudBench(client: client, store: store, group: group, running: running, baseURL: baseURL, logger: logger)
    }

    static func configuration(_ url: URL, database: String) -> PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
            password: url.password, database: database, tls: .disable)
    }

    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }

    func container(user: String) -> CloudServiceContainer {
        CloudServiceContainer(
            baseURL: baseURL, token: { try await CloudServiceTokens.issue(user: user, key: Self.key) },
            identifier: "strata.cloud.bench")
    }

    /// A device of `user` with an in-memory database and an engine driven by hand.
    func device(_ id: String, user: String) throws -> (database: DatabaseQueue, engine: SyncEngine) {
        let database = try DatabaseQueue()
        try database.write { db in try db.execute(sql: Self.schema) }
        let engine = try SyncEngine(
            for: database, tableNames: ["items"], container: container(user: "\(user)-\(runId)"),
            configuration: SyncEngineConfiguration(deviceID: id, schedule: nil), logger: logger, startImmediately: false)
        return (database, engine)
    }
}

/// Seconds of a duration, as a Double.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
