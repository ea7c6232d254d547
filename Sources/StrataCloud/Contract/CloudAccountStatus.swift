/// Whether a container has a signed-in user the cloud can serve.
public enum CloudAccountStatus: String, Hashable, Sendable, Codable {
    case available
    case noAccount
    case restricted
    case temporarilyUnavailable
    case couldNotDetermine
}
