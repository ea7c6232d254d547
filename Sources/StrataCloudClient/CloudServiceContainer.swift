import AsyncHTTPClient
import Foundation
import StrataCloud
import StrataCloudWire

/// A user's container on Strata's live cloud service, over HTTP: give it to a `SyncEngine` as
/// any other `CloudContainer`.
///
/// ```swift
/// let container = CloudServiceContainer(
///     baseURL: URL(string: "https://cloud.example.com")!, token: { try await session.accessToken() },
///     identifier: "com.example.app")
/// let engine = try SyncEngine(for: database, tables: Game.self, container: container)
/// ```
///
/// Failures come back as the `CloudError` the service reported; a lost connection or a missing
/// answer is `CloudError.networkFailure`, and the engine retries what is transient.
public final class CloudServiceContainer: CloudContainer {
    /// Supplies the bearer token of each request, so an app can refresh it as it expires.
    public typealias TokenProvider = @Sendable () async throws -> String

    /// The container's identifier; part of the engine's metadatabase name.
    public let identifier: String
    /// The service's address, such as `https://cloud.example.com`.
    public let baseURL: URL
    /// How the change stream reconnects after a drop.
    public let reconnection: Reconnection
    let transport: CloudServiceTransport

    /// How ``changeHints()`` retries a dropped change stream: the first delay, doubled after each
    /// failure up to the maximum, and reset once a connection is up.
    public struct Reconnection: Sendable, Hashable {
        /// The delay before the first reconnect.
        public var initialDelay: Duration
        /// The longest delay between reconnects.
        public var maximumDelay: Duration

        /// A reconnection policy.
        public init(initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30)) {
            self.initialDelay = initialDelay
            self.maximumDelay = maximumDelay
        }
    }

    /// A container talking to the service at `baseURL` with the tokens `token` provides.
    ///
    /// - Parameters:
    ///   - baseURL: Where the service answers, e.g. `http://127.0.0.1:8080`.
    ///   - token: Provides the bearer token of each request (called again when one expires).
    ///   - identifier: The container's identifier: the metadatabase is kept per identifier.
    ///   - httpClient: The client to send requests with; ``sharedHTTPClient`` by default. The
    ///     caller shuts down a client it created, after the container is gone.
    ///   - timeout: How long one request may take, from sending to the last byte of its answer.
    ///   - maximumResponseBytes: The largest answer read; a larger one is a network failure.
    ///   - reconnection: How a dropped change stream is retried.
    public init(
        baseURL: URL, token: @escaping TokenProvider, identifier: String, httpClient: HTTPClient = CloudServiceContainer.sharedHTTPClient,
        timeout: Duration = .seconds(60), maximumResponseBytes: Int = 256 * 1024 * 1024,
        reconnection: Reconnection = Reconnection()
    ) {
        self.baseURL = baseURL
        self.identifier = identifier
        self.reconnection = reconnection
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        transport = CloudServiceTransport(
            baseURL: base, token: token, httpClient: httpClient, timeout: timeout, maximumResponseBytes: maximumResponseBytes)
    }

    /// A container with a fixed bearer token.
    public convenience init(
        baseURL: URL, token: String, identifier: String, httpClient: HTTPClient = CloudServiceContainer.sharedHTTPClient,
        reconnection: Reconnection = Reconnection()
    ) {
        self.init(baseURL: baseURL, token: { token }, identifier: identifier, httpClient: httpClient, reconnection: reconnection)
    }

    /// The account status the service reports; `noAccount` when the service does not accept
    /// the token (or there is none).
    ///
    /// Always asks the service; its answer replaces what ``account()`` remembers for the token.
    public func accountStatus() async throws -> CloudAccountStatus {
        try await askedAccount().status
    }

    /// The user the token names, as the service knows them.
    ///
    /// Always asks the service; its answer replaces what ``account()`` remembers for the token.
    ///
    /// - Throws: `CloudError.notAuthenticated` when the token is refused or the account is not
    ///   available.
    public func currentUser() async throws -> String {
        let account = try await askedAccount()
        guard account.status == .available, let user = account.user else { throw CloudError.notAuthenticated }
        return user
    }

    /// The account the service reports for the current token, remembered for that token when
    /// it is available and forgotten otherwise, so the container never answers one thing from
    /// memory right after the service said another; a refused token is `noAccount`.
    private func askedAccount() async throws -> CloudAccount {
        let bearer: String
        do {
            bearer = try await transport.bearer()
        } catch CloudError.notAuthenticated {
            return CloudAccount(status: .noAccount, user: nil)
        }
        do {
            let response = try await transport.get(CloudRoute.account, bearer: bearer, as: AccountResponse.self)
            let account = CloudAccount(status: response.status, user: response.status == .available ? response.user : nil)
            if account.status == .available {
                transport.accounts.remember(account, for: bearer)
            } else {
                transport.accounts.forget(token: bearer)
            }
            return account
        } catch CloudError.notAuthenticated {
            return CloudAccount(status: .noAccount, user: nil)
        }
    }

    /// The account's status and user from one request (``accountStatus()`` and
    /// ``currentUser()`` make one each); a refused token is `noAccount`.
    ///
    /// An available account is remembered for its token: asked again with the same token, the
    /// container answers without a request until the service refuses that token (an engine
    /// asks before every send and fetch), or ``accountStatus()`` or ``currentUser()`` hears
    /// another answer. A new token asks the service again.
    public func account() async throws -> CloudAccount {
        if let bearer = try? await transport.bearer(), let known = transport.accounts.account(for: bearer) { return known }
        return try await askedAccount()
    }

    /// The user's own zones.
    public var privateDatabase: any CloudDatabase { CloudServiceDatabase(transport: transport, scope: .private) }
    /// Zones other users shared with the user.
    public var sharedDatabase: any CloudDatabase { CloudServiceDatabase(transport: transport, scope: .shared) }

    /// Accepts the share `url` names for the user.
    public func acceptShare(url: String) async throws -> CloudShare {
        try await transport.post(CloudRoute.acceptShare, AcceptShareRequest(url: url), as: CloudShare.self)
    }

    /// Hints from the service's change stream: one element each time it connects or reconnects
    /// (changes may have landed while it was away, so the engine must fetch), and one per change
    /// event. A dropped stream reconnects with backoff; the sequence ends when its consumer
    /// stops listening.
    public func changeHints() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let task = Task { [transport, reconnection] in
            await ChangeHintConnection(transport: transport, reconnection: reconnection, hints: continuation).run()
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
