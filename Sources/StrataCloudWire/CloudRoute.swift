import StrataCloud

/// The paths of the cloud service's HTTP API (see `Documentation/cloud-api.openapi.yaml`).
public enum CloudRoute {
    /// The prefix of every authenticated route.
    public static let apiPrefix = "/v1"
    /// `GET`: the signed-in user's account status and name (``AccountResponse``).
    public static let account = "/v1/account"
    /// `POST`: accepts a share by URL (``AcceptShareRequest`` → `CloudShare`).
    public static let acceptShare = "/v1/shares/accept"
    /// `POST`: publishes the signed-in user's public key (``PublishPublicKeyRequest`` →
    /// ``EmptyResponse``).
    public static let publishPublicKey = "/v1/keys/publish"
    /// `POST`: looks up users' public keys (``PublicKeysRequest`` → ``PublicKeysResponse``).
    public static let publicKeys = "/v1/keys/lookup"
    /// `GET`: the signed-in user's profile (``UserProfileResponse``); `PUT`: sets it (a
    /// `CloudUserProfile` → ``EmptyResponse``).
    public static let profile = "/v1/profile"
    /// `GET`: a server-sent-events stream with one ``ChangeStreamEvent/change`` event per change
    /// hint.
    public static let changes = "/v1/changes"
    /// `GET`: liveness, unauthenticated (``HealthResponse``).
    public static let health = "/health"
    /// `GET`: Prometheus text exposition, unauthenticated.
    public static let metrics = "/metrics"

    /// `POST /v1/{scope}/{operation}`: one ``CloudOperation`` on one database.
    public static func database(_ scope: CloudDatabaseScope, _ operation: CloudOperation) -> String {
        "\(apiPrefix)/\(scope.rawValue)/\(operation.rawValue)"
    }
}
