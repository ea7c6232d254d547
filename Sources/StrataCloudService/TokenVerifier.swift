import Foundation
import JWTKit

/// Turns an `Authorization` header into the user it authenticates, or nil.
struct TokenVerifier: Sendable {
    let keys: JWTKeyCollection
    /// The time the expiry is checked against (``CloudServiceConfiguration/now``).
    let now: @Sendable () -> Date
    /// Tokens verified before, checked again for their expiry only.
    let verified = VerifiedTokens()

    /// The token's user when the header holds `Bearer <token>` signed HS256 with the service's
    /// key, unexpired, with a subject.
    func user(authorization: String?) async -> String? {
        guard let authorization else { return nil }
        let prefix = "bearer "
        guard authorization.count > prefix.count, authorization.lowercased().hasPrefix(prefix) else { return nil }
        let token = authorization.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces)
        // A compact JWT is base64url and dots: anything else is refused before the memory is
        // asked, as jwt-kit would refuse it.
        guard token.utf8.allSatisfy(Self.isTokenByte) else { return nil }
        if let known = verified.entry(for: token) {
            // The same comparison as jwt-kit's: a token is expired from its `exp` on.
            return now() < known.expires ? known.user : nil
        }
        // jwt-kit verifies with the key it holds whatever the header claims; refusing other
        // algorithms up front also keeps `alg: none` and key-confusion tokens from any parser.
        guard Self.algorithm(of: token) == CloudServiceTokens.algorithm else { return nil }
        // Signature and claims here, the expiry against the service's clock below: jwt-kit's
        // own check reads the system clock.
        guard let payload = try? await keys.verify(token, as: SignedClaims.self),
            (try? payload.exp.verifyNotExpired(currentDate: now())) != nil
        else { return nil }
        let user = payload.sub.value
        guard !user.isEmpty else { return nil }
        verified.remember(token, VerifiedTokens.Entry(user: user, expires: payload.exp.value))
        return user
    }

    /// Whether `byte` may appear in a compact JWT: base64url's alphabet, its padding, the dots.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "="): true
        default: false
        }
    }

    /// ``CloudTokenPayload``'s claims, both required, the expiry left to the verifier's clock.
    private struct SignedClaims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The `alg` of a compact JWT's header.
    static func algorithm(of token: String) -> String? {
        guard let header = token.split(separator: ".", omittingEmptySubsequences: false).first else { return nil }
        var base64 = header.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        return object["alg"] as? String
    }
}
