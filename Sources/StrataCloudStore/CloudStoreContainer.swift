import StrataCloud

/// One user's view of a ``CloudStore`` as a `CloudContainer`: a `SyncEngine`
/// syncs through it exactly as through `MockCloud`'s containers. The user is whoever the
/// process authenticated; the store trusts it and row-level security confines every request
/// to what that user may reach.
public struct CloudStoreContainer: CloudContainer {
    /// The store.
    public let store: CloudStore
    /// The user every request runs for.
    public let user: String
    /// The container's identifier (part of the engine's metadatabase name).
    public let identifier: String

    /// A user's container; ``CloudStore/container(for:identifier:)`` is the usual way in.
    public init(store: CloudStore, user: String, identifier: String) {
        self.store = store
        self.user = user
        self.identifier = identifier
    }

    /// Always available: the user was authenticated before this container was made.
    public func accountStatus() async throws -> CloudAccountStatus { .available }

    /// The user.
    public func currentUser() async throws -> String { user }

    /// The user's own zones.
    public var privateDatabase: any CloudDatabase { store.privateDatabase(of: user) }

    /// The shared records of zones other users shared with this user.
    public var sharedDatabase: any CloudDatabase { store.sharedDatabase(of: user) }

    /// Hints from every writer of the store's PostgreSQL database (``CloudStore/changeHints(for:)``).
    public func changeHints() -> AsyncStream<Void> { store.changeHints(for: user) }

    /// Accepts the share `url` names: an invited user, or anyone when the share is public.
    ///
    /// - Throws: `CloudError.unknownItem(_:)` when the URL names no share the
    ///   user may join.
    public func acceptShare(url: String) async throws -> CloudShare {
        guard let root = CloudShare.rootRecordID(fromURL: url) else {
            // Empty: the URL is no record name, and may be longer than one.
            throw CloudError.unknownItem(CloudRecordID(name: "", zone: CloudZoneID(name: "", owner: "")))
        }
        let (user, logger) = (user, store.logger)
        return try await store.transaction(as: user) { connection in
            var accepted: Int64?
            for try await position in try await connection.query(
                "SELECT strata_cloud.accept_share(\(root.zone.owner), \(root.zone.name), \(root.name))", logger: logger
            ).decode(Int64?.self) {
                accepted = position
            }
            guard accepted != nil, let share = try await CloudStoreDatabase.share(of: root, on: connection, logger: logger) else {
                throw CloudError.unknownItem(root)
            }
            try await connection.perform(
                "SELECT strata_cloud.notify_zone_change(\(root.zone.owner), \(root.zone.name), \([user]))", logger: logger)
            return try await CloudStoreDatabase.named(share, on: connection, logger: logger).seen(by: user)
        }
    }
}
