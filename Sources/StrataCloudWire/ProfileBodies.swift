import StrataCloud

/// The response of `GET /v1/profile` (``CloudRoute/profile``). The body of `PUT /v1/profile`
/// is a `CloudUserProfile` itself (`{"displayName": …, "email": …}`), answered with an
/// ``EmptyResponse``.
public struct UserProfileResponse: Codable, Sendable, Hashable {
    /// The signed-in user's profile; absent before they set one.
    public var profile: CloudUserProfile?

    /// A response carrying `profile`.
    public init(profile: CloudUserProfile?) {
        self.profile = profile
    }
}
