import Foundation

/// A user's view of the cloud on one device: who is signed in, and their private and shared
/// databases.
public protocol CloudContainer: Sendable {
    /// The container's identifier (an app's cloud container); part of the metadatabase's name.
    var identifier: String { get }
    /// Whether a user is signed in and the cloud can serve them.
    func accountStatus() async throws -> CloudAccountStatus
    /// The signed-in user's record name, the owner of the zones they create.
    ///
    /// - Throws: ``CloudError/notAuthenticated`` when nobody is signed in.
    func currentUser() async throws -> String
    /// The account's status and, when it is available, the signed-in user: what
    /// ``accountStatus()`` and ``currentUser()`` say, in one call. A sync engine asks before
    /// every send and fetch; a container that learns both at once answers with one request.
    func account() async throws -> CloudAccount
    /// The user's own zones.
    var privateDatabase: any CloudDatabase { get }
    /// Zones other users shared with this user.
    var sharedDatabase: any CloudDatabase { get }
    /// Hints that something changed in the cloud for this user (a push); each element asks the
    /// engine to fetch. The sequence ends when the container is gone.
    func changeHints() -> AsyncStream<Void>

    /// Accepts the share a ``CloudShare/url`` names, for the signed-in user: an invited user
    /// (any permission the owner gave), or anyone when the share has a public permission. From
    /// then on the shared records are in the user's shared database.
    ///
    /// - Throws: ``CloudError/unknownItem(_:)`` when the URL names no share the user may join
    ///   (never invited, removed, or not a share URL).
    func acceptShare(url: String) async throws -> CloudShare

    /// Publishes the signed-in user's public key (32 bytes of a Curve25519 key-agreement key),
    /// replacing the one they published before; other users' sync engines seal share keys to
    /// it. Only the user themselves can publish theirs.
    ///
    /// - Throws: ``CloudPublicKeyError/wrongSize(_:)`` for a key that is not 32 bytes (the
    ///   service answers such a request with `invalidRequest` naming the field `key`).
    func publishPublicKey(_ key: Data) async throws
    /// The public keys these users published; a user who published none is absent. At most
    /// ``CloudLimits/maximumItemsPerRequest`` users, else ``CloudError/limitExceeded``.
    func publicKeys(of users: [String]) async throws -> [String: Data]

    /// Sets the signed-in user's profile, replacing the one they set before: the display name
    /// (trimmed) and email address that participants of shares with them see, in every share a
    /// cloud returns from then on. Only the user themselves can set theirs.
    ///
    /// - Throws: ``CloudUserProfileError`` naming the field that is not valid (the service
    ///   answers such a request with `invalidRequest` naming the field).
    func setUserProfile(_ profile: CloudUserProfile) async throws
    /// The signed-in user's own profile, as stored (the display name trimmed); nil before they
    /// set one.
    func userProfile() async throws -> CloudUserProfile?
}

/// An account's status and its user, as ``CloudContainer/account()`` gives them.
public struct CloudAccount: Sendable, Hashable {
    /// Whether a user is signed in and the cloud can serve them.
    public var status: CloudAccountStatus
    /// The signed-in user's record name; nil unless ``status`` is `available`.
    public var user: String?

    /// An account from its parts.
    public init(status: CloudAccountStatus, user: String?) {
        self.status = status
        self.user = user
    }
}

extension CloudContainer {
    /// ``accountStatus()``, then ``currentUser()`` when the account is available.
    public func account() async throws -> CloudAccount {
        let status = try await accountStatus()
        guard status == .available else { return CloudAccount(status: status, user: nil) }
        return CloudAccount(status: status, user: try await currentUser())
    }
}
