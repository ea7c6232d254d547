import AsyncHTTPClient
import BenchSupport
import Foundation
import Logging
import PostgresNIO
import StrataCloudClient
import StrataCloudService
import StrataCloudStore
import StrataSQLite
import StrataSync

/// What every process of a run agrees on: the signing key, the PostgreSQL settings, how a
/// device of a user reaches a service.
enum CloudSetup {
    static let key = "strata-cloud-bench-key-0123456789abcdef"

    /// Errors only: info lines would be timed too.
    static let logger: Logger = {
        var logger = Logger(label: "strata.cloud.bench")
        logger.logLevel = ProcessInfo.processInfo.environment["BENCHLOG"] == nil ? .error : .info
        return logger
    }()

    static func configuration(_ url: URL, database: String? = nil, connections: Int = 40) -> PostgresClient.Configuration {
        var configuration = PostgresClient.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
            password: url.password, database: database ?? String(url.path.dropFirst()), tls: .disable)
        configuration.options.maximumConnections = connections
        return configuration
    }

    /// Runs `body` with a client of `url`'s database, running while it does.
    static func withClient<T: Sendable>(
        _ url: URL, database: String? = nil, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: configuration(url, database: database, connections: 4), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    /// A new database for this run, with the store's schema: its URL.
    static func createDatabase(server: URL) async throws -> URL {
        let name = "strata_bench_\(UInt32.random(in: 0...UInt32.max))"
        try await withClient(server) { admin in
            _ = try await admin.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: logger)
        }
        var components = URLComponents(url: server, resolvingAgainstBaseURL: false)
        components?.path = "/" + name
        guard let url = components?.url else { throw BenchFailure("cannot name database \(name) in \(server)") }
        try await withClient(url) { client in
            _ = try await CloudStore(client: client, logger: logger).migrate()
        }
        return url
    }

    /// Drops a database ``createDatabase(server:)`` made, ending whatever sessions still use
    /// it: a full run leaves about 2 GB of records behind otherwise.
    static func dropDatabase(_ database: URL, server: URL) async throws {
        let name = database.lastPathComponent
        guard name.hasPrefix("strata_bench_") else { throw BenchFailure("not a bench database: \(name)") }
        try await withClient(server) { admin in
            _ = try await admin.query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"), logger: logger)
        }
    }

    /// The HTTP client of every simulated device. `HTTPClient.shared` (the containers' default)
    /// opens at most 8 HTTP/1 connections per host and queues the rest: in one process holding
    /// many devices, their open change streams took all 8 and every other request waited
    /// forever, and 20 devices sending at once shared 8 connections. Real devices each have
    /// their own connections, so this client's per-host limit is far above any phase's count.
    static let httpClient: HTTPClient = {
        var configuration = HTTPClient.Configuration.singletonConfiguration
        configuration.connectionPool = .init(idleTimeout: .seconds(600), concurrentHTTP1ConnectionsPerHostSoftLimit: 1_024)
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()

    /// How a device of `user` reaches the service at `baseURL`: with an access token valid
    /// for an hour, issued once and sent with every request, as an app's session holds one
    /// (earlier rounds signed a new token for every request, which no app does).
    static func container(_ baseURL: URL, user: String) -> CloudServiceContainer {
        let session = BenchSession(user: user)
        return CloudServiceContainer(
            baseURL: baseURL, token: { try await session.token() }, identifier: "strata.cloud.bench", httpClient: httpClient)
    }

    /// Whether devices encrypt unless a phase says: yes, as engines do by default, unless
    /// `STRATA_BENCH_ENCRYPTION=off` (to compare a whole run without it).
    static let encryptsByDefault = ProcessInfo.processInfo.environment["STRATA_BENCH_ENCRYPTION"] != "off"

    /// `STRATA_BENCH_BATCHES_IN_FLIGHT=N` sets every device's
    /// `SyncEngineConfiguration.maximumBatchesInFlight`, to compare depths; the engine's
    /// default otherwise.
    static let batchesInFlight = ProcessInfo.processInfo.environment["STRATA_BENCH_BATCHES_IN_FLIGHT"].flatMap { Int($0) }

    /// `STRATA_BENCH_FETCH_PAGE_SIZE=N` sets every device's `fetchPageSize` and the service's
    /// `maximumFetchPageSize` (for phases whose devices take the default), to compare page
    /// sizes; their defaults otherwise.
    static let fetchPageSize = ProcessInfo.processInfo.environment["STRATA_BENCH_FETCH_PAGE_SIZE"].flatMap { Int($0) }

    /// A device: a database file in `folder` with the two tables, and an engine driven by hand.
    ///
    /// With encryption, every device of the process keeps its keys in one process keychain, as
    /// a user's devices whose keychain syncs do (enrollment is not what is measured); devices
    /// in processes of their own pass one key file.
    static func device(
        _ id: String, folder: String, container: any CloudContainer, fetchPageSize: Int? = nil,
        encrypted: Bool = CloudSetup.encryptsByDefault, keys: KeyStorage = .processKeychain(named: "strata-cloud-bench")
    ) async throws -> (database: DatabasePool, engine: SyncEngine) {
        let database = try DatabasePool(path: "\(folder)/\(id).sqlite")
        try await database.write { db in try db.execute(sql: BenchRows.schema()) }
        var configuration = SyncEngineConfiguration(
            deviceID: deviceID(id), schedule: nil,
            encryption: encrypted ? .endToEnd(keys: keys) : .disabled)
        if let fetchPageSize = fetchPageSize ?? Self.fetchPageSize { configuration.fetchPageSize = fetchPageSize }
        if let depth = batchesInFlight { configuration.maximumBatchesInFlight = depth }
        let engine = try SyncEngine(
            for: database, tableNames: BenchRows.tableNames, container: container, configuration: configuration, logger: logger,
            startImmediately: false)
        return (database, engine)
    }
}

extension CloudSetup {
    /// The device id of the bench's device `name`: shaped as an engine's default one (a
    /// lowercase UUID, 36 characters), not the short name itself. Every field version carries
    /// its device's id, in the metadatabase twice and on the wire once, so short names
    /// measured rows about a third smaller than an app's, and versions that Swift keeps
    /// inline where an app's take an allocation each. Derived from the name, so a run's
    /// devices keep their ids from phase to phase and from run to run.
    static func deviceID(_ name: String) -> String {
        // Two FNV-1a hashes of the name, with different offsets: 128 bits, as a UUID's text.
        func hash(_ offset: UInt64) -> UInt64 {
            name.utf8.reduce(offset) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
        }
        let (high, low) = (hash(0xcbf2_9ce4_8422_2325), hash(0x8422_2325_cbf2_9ce4))
        let bytes = (0..<16).map { index in UInt8(truncatingIfNeeded: (index < 8 ? high : low) >> (56 - 8 * (index % 8))) }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9], bytes[10],
                bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        ).uuidString.lowercased()
    }
}

/// Seconds of a duration, as a Double.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// A new temporary folder, removed by the caller.
func makeTemporaryFolder(_ name: String) throws -> String {
    let folder = NSTemporaryDirectory() + "/strata-cloud-bench-\(name)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    return folder
}

extension CloudSetup {
    /// The key file the device processes of `user` share, as one user's devices whose
    /// keychain syncs do.
    static func sharedKeyFile(of user: String) -> String {
        NSTemporaryDirectory() + "/strata-cloud-bench-\(user).strata-keys"
    }
}
