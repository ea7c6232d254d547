import Foundation

/// The body of `POST /v1/keys/publish` (``CloudRoute/publishPublicKey``); the response is an
/// ``EmptyResponse``.
public struct PublishPublicKeyRequest: Codable, Sendable, Hashable {
    /// The signed-in user's public key: 32 bytes, base64 in JSON.
    public var key: Data

    /// A request publishing `key`.
    public init(key: Data) {
        self.key = key
    }
}

/// The body of `POST /v1/keys/lookup` (``CloudRoute/publicKeys``).
public struct PublicKeysRequest: Codable, Sendable, Hashable {
    /// The users whose keys to return.
    public var users: [String]

    /// A request for these users' keys.
    public init(users: [String]) {
        self.users = users
    }
}

/// The response of `POST /v1/keys/lookup`.
public struct PublicKeysResponse: Codable, Sendable, Hashable {
    /// The keys of the users who published one, by user (base64 in JSON); the others are absent.
    public var keys: [String: Data]

    /// A response from the keys found.
    public init(keys: [String: Data]) {
        self.keys = keys
    }
}
