import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Prometheus
import ServiceLifecycle
import StrataCloudClient
import StrataCloudService
import StrataSync

/// A running ``CloudService`` on 127.0.0.1 and an ephemeral port, over any backend, handing out
/// client containers for users: what every test of the service and, later, a conformance suite
/// of client → service → store runs against.
///
/// Use ``with(backend:configure:_:)``, which shuts the service down however the body ends.
final class ServiceHarness: Sendable {
    /// The key the harness signs its tokens with.
    static let key = "strata-test-key-0123456789abcdef"
    static let identifier = "strata.cloud.test"

    let service: CloudService
    let port: Int
    let baseURL: URL
    /// One container identifier per harness: engines of an in-memory database keep their keys
    /// in the process keychain of their container identifier and user, so tests running at the
    /// same time on other clouds must not share one.
    let identifier = "\(ServiceHarness.identifier).\(UUID().uuidString.prefix(8))"
    let registry: PrometheusCollectorRegistry
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    private init(
        service: CloudService, port: Int, registry: PrometheusCollectorRegistry, group: ServiceGroup, running: Task<Void, any Error>
    ) throws {
        self.service = service
        self.port = port
        self.registry = registry
        self.group = group
        self.running = running
        guard let url = URL(string: "http://127.0.0.1:\(port)") else { throw CloudServiceError.notRunning }
        baseURL = url
    }

    /// A configuration for tests: loopback, an ephemeral port, the harness key, no log output.
    static func configuration(limits: CloudLimits = CloudLimits()) -> CloudServiceConfiguration {
        CloudServiceConfiguration(
            host: "127.0.0.1", port: 0, jwtKey: key, limits: limits,
            logger: Logger(label: "strata.cloud.test", factory: { _ in SwiftLogNoOpLogHandler() }))
    }

    /// Starts a service over `backend`, runs `body` with it, and shuts it down gracefully.
    static func with<T: Sendable>(
        backend: @escaping @Sendable (String) -> any CloudContainer,
        configure: (inout CloudServiceConfiguration) -> Void = { _ in },
        _ body: (ServiceHarness) async throws -> T
    ) async throws -> T {
        var configuration = configuration()
        configure(&configuration)
        let harness = try await start(configuration: configuration, backend: backend)
        do {
            let result = try await body(harness)
            try await harness.stop()
            return result
        } catch {
            try? await harness.stop()
            throw error
        }
    }

    /// Starts a service over `cloud`, with the cloud's limits.
    static func with<T: Sendable>(
        cloud: MockCloud,
        configure: (inout CloudServiceConfiguration) -> Void = { _ in },
        _ body: (ServiceHarness) async throws -> T
    ) async throws -> T {
        try await with(
            backend: { cloud.container(user: $0) },
            configure: { configuration in
                configuration.limits = cloud.limits
                configure(&configuration)
            }, body)
    }

    static func start(
        configuration: CloudServiceConfiguration, backend: @escaping @Sendable (String) -> any CloudContainer
    ) async throws -> ServiceHarness {
        let service = CloudService(configuration: configuration, backend: backend)
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], cancellationSignals: [], logger: configuration.logger)
        let running = Task { try await group.run() }
        let port = try await service.listeningPort()
        return try ServiceHarness(service: service, port: port, registry: configuration.metricsRegistry, group: group, running: running)
    }

    /// Shuts the service down gracefully and waits until it stopped.
    func stop() async throws {
        await group.triggerGracefulShutdown()
        try await running.value
    }

    /// A token for `user`, signed with `key`.
    func token(
        user: String, key: String = ServiceHarness.key, expiresIn: Duration = .seconds(600), now: Date = Date()
    ) async throws -> String {
        try await CloudServiceTokens.issue(user: user, key: key, expiresIn: expiresIn, now: now)
    }

    /// A client container for `user`, signed in with a valid token.
    func container(
        user: String, reconnection: CloudServiceContainer.Reconnection = .init(initialDelay: .milliseconds(20))
    ) async throws -> CloudServiceContainer {
        let token = try await token(user: user)
        return CloudServiceContainer(baseURL: baseURL, token: token, identifier: identifier, reconnection: reconnection)
    }

    /// A client container sending `token` as is.
    func container(token: String) -> CloudServiceContainer {
        CloudServiceContainer(baseURL: baseURL, token: token, identifier: identifier)
    }

    /// A raw request, for what a client container never sends.
    func send(
        _ method: HTTPMethod, _ path: String, authorization: String? = nil, body: Data? = nil
    ) async throws -> (status: Int, body: Data, headers: [String: String]) {
        var request = HTTPClientRequest(url: baseURL.absoluteString + path)
        request.method = method
        if let authorization { request.headers.add(name: "Authorization", value: authorization) }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let buffer = try await response.body.collect(upTo: 16 * 1024 * 1024)
        var headers: [String: String] = [:]
        for header in response.headers { headers[header.name.lowercased()] = header.value }
        return (Int(response.status.code), Data(buffer.readableBytesView), headers)
    }
}
