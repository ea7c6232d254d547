import Foundation

/// A device's container on a ``MockCloud``: one user's private and shared databases.
public final class MockCloudContainer: CloudContainer {
    /// Tells containers apart, so a device is not hinted about its own changes.
    public typealias ID = UUID

    /// The cloud this container is a view of.
    public let cloud: MockCloud
    /// The signed-in user's record name.
    public let user: String
    /// This container's identity: one per device.
    public let id = UUID()

    init(cloud: MockCloud, user: String) {
        self.cloud = cloud
        self.user = user
    }

    /// The cloud's container identifier.
    public var identifier: String { cloud.identifier }

    /// The user's account status, as set by ``MockCloud/setAccountStatus(_:for:)`` (available by default).
    public func accountStatus() async throws -> CloudAccountStatus {
        cloud.state.withLock { $0.accountStatus[user, default: .available] }
    }

    /// The user; throws ``CloudError/notAuthenticated`` unless the account is available.
    public func currentUser() async throws -> String {
        guard try await accountStatus() == .available else { throw CloudError.notAuthenticated }
        return user
    }

    /// The user's own zones.
    public var privateDatabase: any CloudDatabase { MockCloudDatabase(container: self, scope: .private) }
    /// Zones other users granted this user.
    public var sharedDatabase: any CloudDatabase { MockCloudDatabase(container: self, scope: .shared) }

    /// Yields after another container changed something; the newest hint is kept while nobody listens.
    public func changeHints() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let key = UUID()
        cloud.state.withLock { state in
            state.hintSubscribers[key] = MockCloudState.HintSubscriber(user: user, container: id, continuation: continuation)
        }
        continuation.onTermination = { [cloud] _ in
            _ = cloud.state.withLock { $0.hintSubscribers.removeValue(forKey: key) }
        }
        return stream
    }

    /// Accepts a share for this container's user: an invited participant, or anyone when the
    /// share is public (they join as a public user with its permission).
    public func acceptShare(url: String) async throws -> CloudShare {
        let user = self.user
        return try cloud.serve(.acceptShare, user: user, from: id) { state in
            guard let root = CloudShare.rootRecordID(fromURL: url), var stored = state.shares[root], root.zone.owner != user else {
                throw CloudError.unknownItem(
                    CloudShare.rootRecordID(fromURL: url) ?? CloudRecordID(name: url, zone: CloudZoneID(name: "", owner: "")))
            }
            if let index = stored.share.participants.firstIndex(where: { $0.user == user }) {
                // Listed: invited, or left and coming back. The owner removes a participant by
                // saving the share without them.
                stored.share.participants[index].acceptance = .accepted
            } else {
                guard stored.share.publicPermission > .none else { throw CloudError.unknownItem(root) }
                stored.share.participants.append(
                    CloudShare.Participant(user: user, role: .publicUser, permission: stored.share.publicPermission, acceptance: .accepted))
            }
            stored.share.changeTag = state.newTag()
            stored.accessChanged[user] = state.nextSequence()
            state.shares[root] = stored
            state.revokedZones[user]?[root.zone] = nil
            return state.named(stored.share, for: user).seen(by: user)
        }
    }

    /// Publishes this user's public key, replacing theirs.
    public func publishPublicKey(_ key: Data) async throws {
        let user = self.user
        guard key.count == CloudPublicKeyError.requiredSize else { throw CloudPublicKeyError.wrongSize(key.count) }
        try cloud.serve(.publishPublicKey, user: user, from: id) { state in
            state.publicKeys[user] = key
        }
    }

    /// The public keys these users published.
    public func publicKeys(of users: [String]) async throws -> [String: Data] {
        let user = self.user
        return try cloud.serve(.fetchPublicKeys, user: user) { state in
            guard users.count <= state.limits.maximumItemsPerRequest else { throw CloudError.limitExceeded }
            var keys: [String: Data] = [:]
            for other in users { keys[other] = state.publicKeys[other] }
            return keys
        }
    }

    /// Sets this user's profile, replacing theirs; participants of shares with them see it in
    /// every share returned from then on.
    public func setUserProfile(_ profile: CloudUserProfile) async throws {
        let user = self.user
        let profile = try profile.validated()
        try cloud.serve(.setUserProfile, user: user, from: id) { state in
            state.profiles[user] = profile
        }
    }

    /// This user's profile, as stored.
    public func userProfile() async throws -> CloudUserProfile? {
        let user = self.user
        return try cloud.serve(.fetchUserProfile, user: user) { state in state.profiles[user] }
    }
}
