import Foundation

/// A device's container on a ``MockCloud``: one user's private and shared databases.
public final class MockCloudContainer: CloudContainer {
    /// Tells containers apart, so a device is not hinted about its own changes.
    public typealias ID = UUID

    public let cloud: MockCloud
    /// The signed-in user's record name.
    public let user: String
    public let id = UUID()

    init(cloud: MockCloud, user: String) {
        self.cloud = cloud
        self.user = user
    }

    public var identifier: String { cloud.identifier }

    public func accountStatus() async throws -> CloudAccountStatus {
        cloud.state.withLock { $0.accountStatus[user, default: .available] }
    }

    public func currentUser() async throws -> String {
        guard try await accountStatus() == .available else { throw CloudError.notAuthenticated }
        return user
    }

    public var privateDatabase: any CloudDatabase { MockCloudDatabase(container: self, scope: .private) }
    public var sharedDatabase: any CloudDatabase { MockCloudDatabase(container: self, scope: .shared) }

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
