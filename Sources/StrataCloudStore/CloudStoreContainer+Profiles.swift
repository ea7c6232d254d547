import Foundation
import Logging
import PostgresNIO
import StrataCloud

extension CloudStoreContainer {
    /// Sets the user's profile, replacing theirs; row-level security lets a request write its
    /// own user's row only.
    ///
    /// - Throws: `CloudUserProfileError` naming the field that is not valid.
    public func setUserProfile(_ profile: CloudUserProfile) async throws {
        let profile = try profile.validated()
        let (user, logger) = (user, store.logger)
        try await store.transaction(as: user) { connection in
            try await connection.perform(
                """
                INSERT INTO strata_cloud.user_profiles (owner, display_name, email)
                VALUES (\(user), \(profile.displayName), \(profile.email))
                ON CONFLICT (owner) DO UPDATE SET display_name = excluded.display_name, email = excluded.email, updated_at = now()
                """,
                logger: logger)
        }
    }

    /// The user's own profile; nil before they set one.
    public func userProfile() async throws -> CloudUserProfile? {
        let (user, logger) = (user, store.logger)
        return try await store.transaction(as: user, repeatableRead: true) { connection in
            try await CloudStoreDatabase.profiles(of: [user], on: connection, logger: logger)[user]
        }
    }
}

extension CloudStoreDatabase {
    /// The profiles of these users that the request's user may read (row-level security: their
    /// own, and their share peers'), by user.
    static func profiles(
        of users: [String], on connection: PostgresConnection, logger: Logger
    ) async throws -> [String: CloudUserProfile] {
        // A name PostgreSQL text cannot hold names nobody with a profile.
        let names = Array(Set(users.filter { !$0.utf8.contains(0) }))
        guard !names.isEmpty else { return [:] }
        var profiles: [String: CloudUserProfile] = [:]
        for try await (owner, displayName, email) in try await connection.query(
            "SELECT owner, display_name, email FROM strata_cloud.user_profiles WHERE owner = ANY(\(names))", logger: logger
        ).decode((String, String, String?).self) {
            profiles[owner] = CloudUserProfile(displayName: displayName, email: email)
        }
        return profiles
    }

    /// `share` with its participants named from the profiles the request's user may read, as
    /// every share the store returns is.
    static func named(_ share: CloudShare, on connection: PostgresConnection, logger: Logger) async throws -> CloudShare {
        let profiles = try await profiles(of: share.participants.map(\.user), on: connection, logger: logger)
        return share.naming { profiles[$0] }
    }
}
