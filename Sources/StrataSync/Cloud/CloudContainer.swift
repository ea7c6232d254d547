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
}
