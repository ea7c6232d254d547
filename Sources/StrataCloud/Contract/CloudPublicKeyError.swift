/// Why a cloud refused a public key (see ``CloudContainer/publishPublicKey(_:)``).
public enum CloudPublicKeyError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A Curve25519 public key is 32 bytes; this one had this many.
    case wrongSize(Int)

    /// The expected size is ``requiredSize`` bytes.
    public static let requiredSize = 32

    /// What was wrong with the key.
    public var description: String {
        switch self {
        case .wrongSize(let size): "a public key is \(Self.requiredSize) bytes, not \(size)"
        }
    }
}
