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
}
