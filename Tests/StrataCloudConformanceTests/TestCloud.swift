import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import StrataCloudClient
import StrataCloudService
import StrataCloudStore
import StrataSync
import Testing

/// The clouds one conformance suite runs against: the in-memory mock, the PostgreSQL store,
/// and the client talking HTTP to the `strata-cloud` service over the store (the last two when
/// `STRATA_TEST_POSTGRES` names a server, as `Tests/test-all.sh` arranges).
enum CloudKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case mock
    case store
    case service

    static let postgresURL: URL? = ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES"].flatMap(URL.init(string:))

    /// The kinds this run can reach.
    static var available: [CloudKind] { postgresURL == nil ? [.mock] : allCases }

    var testDescription: String { rawValue }

    /// Runs `body` with a new, empty cloud of this kind as ``TestCloud/current``.
    func run(limits: CloudLimits = CloudLimits(), _ body: () async throws -> Void) async throws {
        let cloud = try await TestCloud.make(self, limits: limits)
        do {
            try await TestCloud.$current.withValue(cloud) { try await body() }
        } catch {
            try? await cloud.stop()
            throw error
        }
        try await cloud.stop()
    }
}

/// One test's cloud, whatever its kind: users' containers, and what a test inspects through
/// the owner's own view (its records, shares and zones). Every store test gets a database of
/// its own, so users keep their plain names.
final class TestCloud: Sendable {
    @TaskLocal static var current: TestCloud = TestCloud(mock: MockCloud())

    let mock: MockCloud?
    /// One container identifier per cloud (see `ServiceHarness.identifier`).
    let identifier = "strata.cloud.conformance.\(UUID().uuidString.prefix(8))"
    let store: CloudStore?
    /// The PostgreSQL database behind the store (and the service), for tests that read or
    /// damage it as the operator could.
    let databaseName: String?
    /// The service in front of the store, and where it listens, for the `service` kind.
    let service: (group: ServiceGroup, running: Task<Void, any Error>, baseURL: URL)?
    private let runner: Task<Void, Never>?

    static let serviceKey = "strata-conformance-key-0123456789abcdef"

    private init(mock: MockCloud) {
        self.mock = mock
        databaseName = nil
        store = nil
        service = nil
        runner = nil
    }

    private init(
        store: CloudStore, databaseName: String, runner: Task<Void, Never>, service: (ServiceGroup, Task<Void, any Error>, URL)?
    ) {
        mock = nil
        self.databaseName = databaseName
        self.store = store
        self.runner = runner
        self.service = service
    }

    static func make(_ kind: CloudKind, limits: CloudLimits) async throws -> TestCloud {
        switch kind {
        case .mock:
            return TestCloud(mock: MockCloud(limits: limits))
        case .store, .service:
            let url = try #require(CloudKind.postgresURL)
            let name = "conformance_\(UInt64.random(in: 0...UInt64.max))"
            try await AdminConnection.shared.createDatabase(name)
            var logger = Logger(label: "strata.cloud.conformance")
            logger.logLevel = .error
            let client = PostgresClient(configuration: AdminConnection.configuration(url, database: name), backgroundLogger: logger)
            let runner = Task { await client.run() }
            let store = CloudStore(client: client, limits: limits, logger: logger)
            try await store.migrate()
            guard kind == .service else { return TestCloud(store: store, databaseName: name, runner: runner, service: nil) }
            let service = CloudService(
                configuration: CloudServiceConfiguration(host: "127.0.0.1", port: 0, jwtKey: serviceKey, limits: limits, logger: logger)
            ) { user in
                store.container(for: user)
            }
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], cancellationSignals: [], logger: logger)
            let running = Task { try await group.run() }
            let port = try await service.listeningPort()
            let baseURL = try #require(URL(string: "http://127.0.0.1:\(port)"))
            return TestCloud(store: store, databaseName: name, runner: runner, service: (group, running, baseURL))
        }
    }

    func stop() async throws {
        if let service {
            await service.group.triggerGracefulShutdown()
            try await service.running.value
        }
        runner?.cancel()
        // A kept cluster (a developer's) otherwise grows by every test's database, about 1 GB
        // a full run.
        if let databaseName { await AdminConnection.shared.dropDatabase(databaseName) }
    }

    func container(user: String) -> any CloudContainer {
        if let service {
            return CloudServiceContainer(
                baseURL: service.baseURL,
                token: { try await CloudServiceTokens.issue(user: user, key: Self.serviceKey) },
                identifier: identifier,
                reconnection: .init(initialDelay: .milliseconds(20)))
        }
        if let store { return store.container(for: user, identifier: identifier) }
        return mock?.container(user: user) ?? MockCloud().container(user: user)
    }

    /// The records a zone holds, by name, as its owner sees them.
    func records(in zone: CloudZoneID) async throws -> [CloudRecord] {
        if let mock { return mock.records(in: zone) }
        do {
            // Page by page: the service serves pages of at most 2,000 records.
            let database = container(user: zone.owner).privateDatabase
            var records: [String: CloudRecord] = [:]
            var token: CloudChangeToken?
            for _ in 0..<1_000 {
                let page = try await database.fetchZoneChanges(zone, since: token, limit: 1_000)
                for record in page.changed { records[record.id.name] = record }
                for tombstone in page.deleted { records[tombstone.id.name] = nil }
                token = page.token
                if !page.moreComing { break }
            }
            return records.values.sorted { $0.id.name < $1.id.name }
        } catch CloudError.zoneNotFound {
            return []
        }
    }

    /// The share of a root, as its owner sees it (without the viewer).
    func share(of root: CloudRecordID) async throws -> CloudShare? {
        if let mock { return mock.share(of: root) }
        do {
            var share = try await container(user: root.zone.owner).privateDatabase.fetchShare(rootRecordID: root)
            share.currentUser = nil
            return share
        } catch CloudError.unknownItem {
            return nil
        }
    }

    /// The zones a user owns, by name.
    func zones(owner: String) async throws -> [CloudZoneID] {
        if let mock { return mock.zones(owner: owner) }
        return try await container(user: owner).privateDatabase.fetchDatabaseChanges(since: nil).changedZones
            .sorted { $0.name < $1.name }
    }

    func purgeTombstones(in zone: CloudZoneID) async throws {
        if let mock { return mock.purgeTombstones(in: zone) }
        try await store?.purgeTombstones(in: zone)
    }
}

/// A connection to the server's `postgres` database that creates one database per test.
actor AdminConnection {
    static let shared = AdminConnection()

    private var client: PostgresClient?

    static func configuration(_ url: URL, database: String) -> PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: url.host ?? "127.0.0.1", port: url.port ?? 5432, username: url.user ?? "postgres",
            password: url.password, database: database, tls: .disable)
    }

    /// Creates a database, retrying a few times: PostgreSQL refuses `CREATE DATABASE` while
    /// another session uses its template, which parallel tests creating databases can cause.
    /// The last failure is reported with PostgreSQL's own message.
    func createDatabase(_ name: String) async throws {
        let client = try adminClient()
        for attempt in 1...5 {
            do {
                try await client.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"))
                return
            } catch {
                if attempt == 5 { throw AdminFailure(description: "CREATE DATABASE \(name): \(String(reflecting: error))") }
                try await Task.sleep(for: .milliseconds(200 * attempt))
            }
        }
    }

    /// Drops a test's database once the test is done with it; `FORCE` ends the sessions a
    /// stopped pool or a child process may still hold. A failure is printed, not thrown: the
    /// test itself passed or failed already, and a database left behind harms no other test.
    func dropDatabase(_ name: String) async {
        do {
            try await adminClient().query(PostgresQuery(unsafeSQL: "DROP DATABASE IF EXISTS \(name) WITH (FORCE)"))
        } catch {
            print("warning: the test database \(name) was not dropped: \(String(reflecting: error))")
        }
    }

    struct AdminFailure: Error, CustomStringConvertible {
        var description: String
    }

    private func adminClient() throws -> PostgresClient {
        if let client { return client }
        let url = try #require(CloudKind.postgresURL)
        var logger = Logger(label: "strata.cloud.conformance.admin")
        logger.logLevel = .error
        let client = PostgresClient(
            configuration: Self.configuration(url, database: String(url.path.dropFirst())), backgroundLogger: logger)
        Task.detached { await client.run() }
        self.client = client
        return client
    }
}
