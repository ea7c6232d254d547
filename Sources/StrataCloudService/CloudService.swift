import Hummingbird
import Logging
import NIOCore
import Prometheus
import ServiceLifecycle
import StrataCloud
import Synchronization

/// The HTTP service of Strata's live cloud: the `CloudDatabase` operations, account, sharing and
/// a change stream, over JSON (see `Documentation/cloud-api.openapi.yaml`), for any backend.
///
/// Every `/v1` request carries a bearer token (HS256, see ``CloudServiceTokens``); the service
/// serves it from the container `backend` gives for the token's user. Tests pass a `MockCloud`'s
/// containers, production the PostgreSQL store's.
///
/// Run it in a `ServiceGroup`: graceful shutdown stops accepting requests, ends the change
/// streams and lets requests in flight finish.
///
/// ```swift
/// let service = CloudService(configuration: CloudServiceConfiguration(jwtKey: secret)) { user in
///     cloud.container(user: user)
/// }
/// try await ServiceGroup(services: [service], gracefulShutdownSignals: [.sigterm], logger: logger).run()
/// ```
public final class CloudService: Service, Sendable {
    /// How the service listens and what it accepts.
    public let configuration: CloudServiceConfiguration
    let backend: @Sendable (String) -> any CloudContainer
    let changeStreams = ChangeStreams()
    private let listening = Mutex(ListeningState())

    private struct ListeningState {
        var port: Int?
        var finished = false
        var waiters: [CheckedContinuation<Int, any Error>] = []
    }

    /// A service serving each authenticated user from `backend(user)`.
    public init(configuration: CloudServiceConfiguration, backend: @escaping @Sendable (String) -> any CloudContainer) {
        self.configuration = configuration
        self.backend = backend
    }

    /// Runs the server until graceful shutdown or cancellation.
    ///
    /// - Throws: ``CloudServiceTokenError/keyTooShort`` when the configured key is too short.
    public func run() async throws {
        do {
            try CloudServiceTokens.checkKey(configuration.jwtKey)
        } catch {
            didFinish()
            throw error
        }
        let keys = await CloudServiceTokens.keyCollection(key: configuration.jwtKey)
        let router = makeRouter(verifier: TokenVerifier(keys: keys, now: configuration.now))
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), serverName: "strata-cloud"),
            onServerRunning: { [weak self] channel in
                self?.didStartListening(port: channel.localAddress?.port)
            },
            logger: configuration.logger
        )
        defer { didFinish() }
        try await withGracefulShutdownHandler {
            try await app.run()
        } onGracefulShutdown: { [changeStreams] in
            changeStreams.closeAll(permanently: true)
        }
    }

    /// The port the server listens on, once it does: the bound one when the configuration asked
    /// for port 0.
    ///
    /// - Throws: ``CloudServiceError/notRunning`` when the service stopped before listening.
    public func listeningPort() async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<Int, any Error>? = listening.withLock { state in
                if let port = state.port { return .success(port) }
                if state.finished { return .failure(CloudServiceError.notRunning) }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    /// Ends every open change stream; clients reconnect, and re-fetch as after any reconnect.
    /// For operations such as rotating the token key, and for tests of reconnection.
    public func closeChangeStreams() {
        changeStreams.closeAll(permanently: false)
    }

    /// How many change streams are open.
    public var openChangeStreamCount: Int { changeStreams.count }

    private func didStartListening(port: Int?) {
        let waiters = listening.withLock { state in
            state.port = port ?? configuration.port
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: port ?? configuration.port) }
    }

    private func didFinish() {
        let waiters = listening.withLock { state in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(throwing: CloudServiceError.notRunning) }
    }
}

/// Why the service cannot answer a question about itself.
public enum CloudServiceError: Error, Hashable, Sendable {
    /// The service is not running (it stopped, or failed to bind).
    case notRunning
}
