import Foundation
import StrataCloud
import StrataCloudWire

extension CloudServiceContainer {
    /// Publishes the signed-in user's public key through `POST /v1/keys/publish`, replacing
    /// theirs.
    ///
    /// - Throws: `CloudPublicKeyError.wrongSize(_:)` for a key that is not 32 bytes, before
    ///   anything is sent.
    public func publishPublicKey(_ key: Data) async throws {
        guard key.count == CloudPublicKeyError.requiredSize else { throw CloudPublicKeyError.wrongSize(key.count) }
        _ = try await transport.post(CloudRoute.publishPublicKey, PublishPublicKeyRequest(key: key), as: EmptyResponse.self)
    }

    /// The public keys these users published, through `POST /v1/keys/lookup`; a user who
    /// published none is absent.
    ///
    /// - Throws: `CloudError.limitExceeded` for more users than the service accepts in one
    ///   request.
    public func publicKeys(of users: [String]) async throws -> [String: Data] {
        try await transport.post(CloudRoute.publicKeys, PublicKeysRequest(users: users), as: PublicKeysResponse.self).keys
    }
}
