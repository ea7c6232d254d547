import Foundation
import Logging
import PostgresNIO
import StrataSync

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

    /// The role requests run as: no login, no ownership, subject to row-level security. The
    /// service's login role must be a member of it.
    public static var requestRole: String { CloudStoreMigrations.requestRole }

    public init(client: PostgresClient, limits: CloudLimits = CloudLimits(), logger: Logger = Logger(label: "strata.cloud.store")) {
        self.client = client
        self.limits = limits
        self.logger = logger
    }

    /// Brings the schema up to date; safe to call from many processes at once.
    ///
    /// - Returns: the migration versions applied by this call.
    @discardableResult
    public func migrate() async throws -> [Int] {
        try await CloudStoreMigrations.run(on: client, logger: logger)
    }

    /// The private database of `user`: their own zones.
    public func privateDatabase(of user: String) -> CloudStoreDatabase {
        CloudStoreDatabase(store: self, user: user)
    }

    /// Forgets a zone's tombstones, as the service does after a while: change tokens issued
    /// before now fail with ``StrataSync/CloudError/changeTokenExpired``. An administrative
    /// operation: it runs as the connecting role.
    public func purgeTombstones(in zone: CloudZoneID) async throws {
        try await client.withTransaction(logger: logger) { connection in
            try await connection.query(
                "DELETE FROM strata_cloud.tombstones WHERE owner = \(zone.owner) AND zone = \(zone.name)", logger: logger)
            try await connection.query(
                """
                UPDATE strata_cloud.zones SET sequence = sequence + 1, horizon = sequence + 1
                WHERE owner = \(zone.owner) AND name = \(zone.name)
                """,
                logger: logger)
        }
    }

    /// Runs `body` in one transaction as ``requestRole`` with `user` as the request's user.
    func transaction<Result: Sendable>(
        as user: String, repeatableRead: Bool = false, _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let logger = self.logger
        do {
            return try await client.withTransaction(logger: logger) { connection in
                if repeatableRead {
                    try await connection.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
                }
                try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL ROLE \(CloudStoreMigrations.requestRole)"), logger: logger)
                try await connection.query("SELECT set_config('strata.user', \(user), true)", logger: logger)
                return try await body(connection)
            }
        } catch let error as PostgresTransactionError {
            // The caller's own error (a CloudError) comes out as itself.
            if let cloudError = error.closureError as? CloudError { throw cloudError }
            throw error
        }
    }
}
