import Foundation
import JWTKit

/// The claims of a bearer token the service accepts: the user and an expiry, both required.
public struct CloudTokenPayload: JWTPayload, Equatable {
    /// The user's record name.
    public var sub: SubjectClaim
    /// When the token stops being accepted.
    public var exp: ExpirationClaim

    /// A payload for `user`, valid until `expiration`.
    public init(user: String, expiration: Date) {
        sub = SubjectClaim(value: user)
        exp = ExpirationClaim(value: expiration)
    }

    /// Rejects an expired token.
    public func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired()
    }
}

/// Bearer tokens for the service, signed HS256 with the service's key: for development, tests and
/// trusted back ends that mint tokens themselves.
public enum CloudServiceTokens {
    /// The only signing algorithm the service accepts.
    public static let algorithm = "HS256"

    /// The shortest key accepted: HS256 keys shorter than the hash add no strength, and jwt-kit
    /// traps on them in debug builds.
    public static let minimumKeyBytes = 32

    /// A token naming `user`, valid for `expiresIn` from `now`.
    ///
    /// - Throws: ``CloudServiceTokenError/keyTooShort`` for a key under ``minimumKeyBytes``.
    public static func issue(user: String, key: String, expiresIn: Duration = .seconds(3600), now: Date = Date()) async throws -> String {
        try checkKey(key)
        let (seconds, attoseconds) = expiresIn.components
        let expiration = now.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18)
        let keys = await keyCollection(key: key)
        return try await keys.sign(CloudTokenPayload(user: user, expiration: expiration))
    }

    /// Refuses a key under ``minimumKeyBytes``.
    static func checkKey(_ key: String) throws(CloudServiceTokenError) {
        guard key.utf8.count >= minimumKeyBytes else { throw .keyTooShort }
    }

    /// The key collection that signs and verifies with `key`.
    static func keyCollection(key: String) async -> JWTKeyCollection {
        await JWTKeyCollection().add(hmac: HMACKey(from: key), digestAlgorithm: .sha256)
    }
}

/// Why a token key cannot be used.
public enum CloudServiceTokenError: Error, Hashable, Sendable {
    /// The HMAC key is shorter than ``CloudServiceTokens/minimumKeyBytes``.
    case keyTooShort
}
