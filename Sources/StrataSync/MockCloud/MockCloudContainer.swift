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
}
