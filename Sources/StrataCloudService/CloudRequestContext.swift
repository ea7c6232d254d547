import Hummingbird

/// The per-request context of the service's router: Hummingbird's core storage plus the user a
/// bearer token authenticated.
public struct CloudRequestContext: RequestContext {
    /// Hummingbird's per-request storage.
    public var coreContext: CoreRequestContextStorage
    /// The authenticated user (the token's `sub`); nil until authentication passed, and always
    /// nil outside `/v1`.
    public var user: String?

    /// A context for a new request.
    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
    }
}
