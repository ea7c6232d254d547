import Foundation
import Logging
import PostgresNIO
import StrataCloud
import Synchronization

/// The cloud's semantics in PostgreSQL: zones, records with per-field versions, change feeds,
/// tombstones and assets, for the `strata-cloud` service and for trusted server-side processes.
///
/// Every request runs in its own transaction as ``requestRole`` with the authenticated user
/// set for the transaction (`strata.user`), so row-level security, not only this code, decides
/// what the user reaches: their own zones and what is in them.
///
/// Change tokens are per-zone positions assigned inside the writing transaction while it holds
/// the zone's row lock, so positions commit in order: a reader that saw position N can never
/// miss a change numbered below N that committed later (the outbox gap of sequences).
///
/// ```swift
/// let client = PostgresClient(configuration: configuration)
/// Task { await client.run() }
/// let store = CloudStore(client: client)
/// try await store.migrate()
/// let alice = store.privateDatabase(of: "alice")
/// try await alice.saveZones([zone])
/// ```
public final class CloudStore: Sendable {
    /// The connection pool; the caller runs it (`client.run()`).
    public let client: PostgresClient
    /// What one request may carry.
    public let limits: CloudLimits
    let logger: Logger
    let listener: ChangeListener
    /// Runs inside every modify transaction once its writes are done, before it commits: tests
    /// hold a writer there to show that readers never skip its positions.
    let beforeModifyCommit = Mutex<(@Sendable () async -> Void)?>(nil)

    /// The most changes one `fetchZoneChanges` page returns, whatever limit it asks for.
    public static let maximumPageSize = 10_000

    /// The role requests run as: no login, no ownership, subject to row-level security. The
    /// service's login role must be a member of it.
    public static var requestRole: String { CloudStoreMigrations.requestRole }

    /// A store over `client`'s database; run the client (`client.run()`) and call ``migrate()``
    /// before the first request. `limits` are what one request may carry and each user may store.
    public init(client: PostgresClient, limits: CloudLimits = CloudLimits(), logger: Logger = Logger(label: "strata.cloud.store")) {
        self.client = client
        self.limits = limits
        self.logger = logger
        listener = ChangeListener(client: client, logger: logger)
    }

    deinit {
        listener.stop()
    }

    /// Brings the schema up to date; safe to call from many processes at once.
    ///
    /// - Returns: the migration versions applied by this call.
    @discardableResult
    public func migrate() async throws -> [Int] {
        try await CloudStoreMigrations.run(on: client, logger: logger)
    }

    /// Brings the schema of the database `connection` is connected to up to date, over that one
    /// connection: for one-shot tools such as `strata-cloud migrate`, which then close it.
    ///
    /// - Returns: the migration versions applied by this call.
    @discardableResult
    public static func migrate(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await CloudStoreMigrations.run(on: connection, logger: logger)
    }

    /// The private database of `user`: their own zones.
    public func privateDatabase(of user: String) -> CloudStoreDatabase {
        CloudStoreDatabase(store: self, user: user, scope: .private)
    }

    /// The shared database of `user`: the shared records of other users' zones, for the
    /// shares `user` accepted.
    public func sharedDatabase(of user: String) -> CloudStoreDatabase {
        CloudStoreDatabase(store: self, user: user, scope: .shared)
    }

    /// `user`'s view of the store as a `CloudContainer`: what a `SyncEngine`
    /// syncs through, in a trusted process or behind the service once it authenticated `user`.
    public func container(for user: String, identifier: String = "strata.cloud") -> CloudStoreContainer {
        CloudStoreContainer(store: self, user: user, identifier: identifier)
    }

    /// Hints that something changed for `user`, from the commits of every process writing to
    /// this PostgreSQL database (LISTEN/NOTIFY, one listening connection per store). A hint
    /// is not a change: the receiver fetches with its change tokens, so a hint lost while
    /// reconnecting costs nothing but latency (every subscriber gets one on each connect).
    public func changeHints(for user: String) -> AsyncStream<Void> {
        listener.subscribe(user: user)
    }

    /// Forgets a zone's tombstones, as the service does after a while: change tokens issued
    /// before now fail with `CloudError.changeTokenExpired`. An administrative
    /// operation: it runs as the connecting role.
    public func purgeTombstones(in zone: CloudZoneID) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.perform(
                "DELETE FROM strata_cloud.tombstones WHERE owner = \(zone.owner) AND zone = \(zone.name)", logger: logger)
            try await connection.perform(
                """
                UPDATE strata_cloud.zones SET sequence = sequence + 1, horizon = sequence + 1
                WHERE owner = \(zone.owner) AND name = \(zone.name)
                """,
                logger: logger)
        }
    }

    /// Runs `body` in one transaction as ``requestRole`` with `user` as the request's user.
    ///
    /// The transaction is run by hand rather than with postgres-nio's `withTransaction`: after
    /// PostgreSQL dropped the connection (a restart, `pg_terminate_backend`), that one sent
    /// `ROLLBACK` down the closed connection and waited for its answer forever, holding the
    /// request (and graceful shutdown) with it. A closed connection has nothing to roll back.
    ///
    /// The work runs under a ``ConnectionWatch``: if the connection closes while the work holds
    /// it, the caller gets `serviceUnavailable` at once, whatever the work is waiting for.
    func transaction<Result: Sendable>(
        as user: String, repeatableRead: Bool = false, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let (logger, client) = (self.logger, self.client)
        do {
            return try await ConnectionWatch<Result>.run { watch in
                try await client.withConnection { connection in
                    watch.watch(connection)
                    // The transaction runs on the connection's own event loop: a statement's
                    // answer then resumes it without waking another thread, and the next
                    // statement is written without waking the loop (EventLoopTaskExecutor).
                    return try await withTaskExecutorPreference(EventLoopTaskExecutor(connection.eventLoop)) {
                        // Two round trips before the request's own statements, not four: the
                        // isolation level goes with BEGIN, and the role with the user (setting the
                        // `role` parameter locally is what SET LOCAL ROLE does). Every request
                        // pays them (issue #27: the push path makes several).
                        try await connection.perform(
                            repeatableRead ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN", logger: logger)
                        do {
                            try await connection.run(
                                PreparedStatements.ActAs(role: CloudStoreMigrations.requestRole, user: user), logger: logger)
                            let value = try await body(connection)
                            try await connection.perform("COMMIT", logger: logger)
                            return value
                        } catch {
                            if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
                            throw error
                        }
                    }
                }
            }
        } catch let error as CloudError {
            // The caller's own error comes out as itself.
            throw error
        } catch let error as PSQLError where Self.refusal(error) != nil {
            throw Self.refusal(error) ?? CloudError.permissionFailure(nil)
        } catch  where StoreFailure.isTransient(error) {
            throw CloudError.serviceUnavailable(retryAfter: StoreFailure.retryDelay)
        }
    }

    /// Row-level security refusing a write (SQLSTATE 42501, insufficient_privilege) means the
    /// user tried to touch what is not theirs: a permission failure, with nothing changed.
    static func refusal(_ error: PSQLError) -> CloudError? {
        error.serverInfo?[.sqlState] == "42501" ? .permissionFailure(nil) : nil
    }
}
