import Crypto
import Foundation

/// Signs JWTs by hand, for tokens the token kit would not issue.
enum HMACSHA256 {
    /// The base64url HMAC-SHA256 of `message` under `key`.
    static func sign(_ message: String, key: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Data(message.utf8), using: SymmetricKey(data: Data(key.utf8)))
        return Data(mac).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
