import Foundation

/// A typed field value of a ``CloudRecord``: SQLite's storage classes, plus a reference to an
/// asset stored in the cloud by content hash.
public enum CloudValue: Hashable, Sendable, Codable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bytes(Data)
    /// Content stored once in the cloud's asset store, named by its SHA-256.
    case asset(CloudAssetReference)

    /// The number of bytes the value counts for against a request's byte limit (assets count
    /// only their reference: their content travels apart, as CloudKit's assets do).
    package var encodedSize: Int {
        switch self {
        case .null: 1
        case .integer, .real: 8
        case .text(let text): text.utf8.count
        case .bytes(let data): data.count
        case .asset(let reference): reference.hash.count + 8
        }
    }
}

/// A field's pointer to an asset in the cloud's asset store.
public struct CloudAssetReference: Hashable, Sendable, Codable {
    /// The lowercase hex SHA-256 of the asset's uncompressed content.
    public var hash: String
    /// The uncompressed size in bytes.
    public var size: Int64

    /// A reference from its parts.
    public init(hash: String, size: Int64) {
        self.hash = hash
        self.size = size
    }

    private enum CodingKeys: String, CodingKey { case hash, size }

    /// Decodes the synthesized form; a `size` that is not a whole number is an error naming
    /// it (see `decodeWholeNumber`), not one about the whole body.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            hash: try container.decode(String.self, forKey: .hash), size: try container.decodeWholeNumber(Int64.self, forKey: .size))
    }
}
