import Crypto
import Foundation

/// The secret a share URL carries in its fragment (`#k=<version>.<base64url>`): it opens the
/// zone keys the share holds for link holders. The cloud never sees it (engines strip the
/// fragment), and the link alone opens nothing (the sealed keys are in the share, which only
/// participants can fetch): reading takes both.
struct LinkKey: Sendable {
    var version: Int
    var secret: SymmetricKey

    /// The fragment's value.
    var text: String {
        let bytes = secret.withUnsafeBytes { Data($0) }
        let base64 = bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return "\(version).\(base64)"
    }

    /// The link key of a share URL, and the URL without it; nil key when it has none (or a
    /// malformed one, which opens nothing).
    static func split(_ url: String) -> (address: String, link: LinkKey?) {
        let parts = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let address = String(parts.first ?? "")
        guard parts.count == 2, parts[1].hasPrefix("k=") else { return (address, nil) }
        let value = parts[1].dropFirst(2).split(separator: ".", maxSplits: 1)
        guard value.count == 2, value[0].utf8.allSatisfy({ (0x30...0x39).contains($0) }), let version = Int(value[0]) else {
            return (address, nil)
        }
        var base64 = value[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), data.count == 32 else { return (address, nil) }
        return (address, LinkKey(version: version, secret: SymmetricKey(data: data)))
    }
}
