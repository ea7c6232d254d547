import StrataCloud

/// The response of `GET /v1/account`.
public struct AccountResponse: Codable, Sendable, Hashable {
    /// Whether the cloud can serve the user.
    public var status: CloudAccountStatus
    /// The user's record name; absent unless the account is available.
    public var user: String?

    /// A response from its parts.
    public init(status: CloudAccountStatus, user: String?) {
        self.status = status
        self.user = user
    }
}

/// The response of `GET /health`.
public struct HealthResponse: Codable, Sendable, Hashable {
    /// `ok` while the service serves requests.
    public var status: String

    /// A response from its status.
    public init(status: String = "ok") {
        self.status = status
    }
}
