import StrataCloud
import StrataCloudWire

extension CloudServiceContainer {
    /// Sets the signed-in user's profile through `PUT /v1/profile`, replacing theirs.
    ///
    /// - Throws: `CloudUserProfileError` naming the field that is not valid, before anything
    ///   is sent.
    public func setUserProfile(_ profile: CloudUserProfile) async throws {
        let profile = try profile.validated()
        _ = try await transport.put(CloudRoute.profile, profile, as: EmptyResponse.self)
    }

    /// The signed-in user's profile, through `GET /v1/profile`; nil before they set one.
    public func userProfile() async throws -> CloudUserProfile? {
        try await transport.get(CloudRoute.profile, as: UserProfileResponse.self).profile
    }
}
