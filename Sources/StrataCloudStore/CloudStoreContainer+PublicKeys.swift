import Foundation
import PostgresNIO
import StrataCloud

extension CloudStoreContainer {
    /// Publishes the user's public key, replacing theirs; row-level security lets a request
    /// write its own user's row only.
    ///
    /// - Throws: `CloudPublicKeyError.wrongSize(_:)` for a key that is not 32 bytes.
    public func publishPublicKey(_ key: Data) async throws {
        guard key.count == CloudPublicKeyError.requiredSize else { throw CloudPublicKeyError.wrongSize(key.count) }
        let (user, logger) = (user, store.logger)
        try await store.transaction(as: user) { connection in
            try await connection.perform(
                """
                INSERT INTO strata_cloud.public_keys (owner, key) VALUES (\(user), \(key))
                ON CONFLICT (owner) DO UPDATE SET key = excluded.key, updated_at = now()
                """,
                logger: logger)
        }
    }

    /// The public keys these users published; a user who published none is absent.
    ///
    /// - Throws: `CloudError.limitExceeded` for more users than the store's
    ///   `CloudLimits.maximumItemsPerRequest`.
    public func publicKeys(of users: [String]) async throws -> [String: Data] {
        try store.limits.checkFetch(count: users.count)
        // A name PostgreSQL text cannot hold names nobody who published.
        let names = Array(Set(users.filter { !$0.utf8.contains(0) }))
        guard !names.isEmpty else { return [:] }
        let (user, logger) = (user, store.logger)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            var keys: [String: Data] = [:]
            for try await (owner, key) in try await connection.query(
                "SELECT owner, key FROM strata_cloud.public_keys WHERE owner = ANY(\(names))", logger: logger
            ).decode((String, Data).self) {
                keys[owner] = key
            }
            return keys
        }
    }
}
