import Foundation

/// An asset's content as it travels to and from the cloud: the compressed chunks exactly as
/// StrataAssets stores them, so content is never recompressed on the way.
public struct CloudAsset: Hashable, Sendable, Codable {
    /// The lowercase hex SHA-256 of the uncompressed content.
    public var hash: String
    /// The uncompressed size in bytes.
    public var size: Int64
    /// The uncompressed size of every chunk but the last.
    public var chunkSize: Int64
    /// The stored chunks, in order.
    public var chunks: [Chunk]

    /// One chunk in transit, in the form StrataAssets stores it: the engine converts to and
    /// from its storage type, so the contract does not depend on storage.
    public struct Chunk: Hashable, Sendable, Codable {
        /// The stored bytes: raw deflate or the content itself, as ``encoding`` says.
        public var data: Data
        /// ``storedEncoding`` (0): stored as is; ``deflateEncoding`` (1): raw deflate;
        /// ``sealedEncoding`` (2): ciphertext the cloud cannot read.
        public var encoding: Int
        /// The uncompressed size.
        public var size: Int64
        /// The CRC-32 of the chunk's index (8 bytes, little-endian) followed by ``data``.
        public var crc32: UInt32

        /// A chunk from its parts.
        public init(data: Data, encoding: Int, size: Int64, crc32: UInt32) {
            self.data = data
            self.encoding = encoding
            self.size = size
            self.crc32 = crc32
        }

        private enum CodingKeys: String, CodingKey { case data, encoding, size, crc32 }

        /// Decodes the synthesized form; a number that is not whole where an integer goes is
        /// an error naming its field (see `decodeWholeNumber`).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(
                data: try container.decode(Data.self, forKey: .data),
                encoding: try container.decodeWholeNumber(Int.self, forKey: .encoding),
                size: try container.decodeWholeNumber(Int64.self, forKey: .size),
                crc32: try container.decodeWholeNumber(UInt32.self, forKey: .crc32))
        }
    }

    /// The bytes the asset's chunks occupy in transit.
    public var storedSize: Int { chunks.reduce(0) { $0 + $1.data.count } }

    /// An asset from its parts.
    public init(hash: String, size: Int64, chunkSize: Int64, chunks: [Chunk]) {
        self.hash = hash
        self.size = size
        self.chunkSize = chunkSize
        self.chunks = chunks
    }

    private enum CodingKeys: String, CodingKey { case hash, size, chunkSize, chunks }

    /// Decodes the synthesized form; a number that is not whole where an integer goes is an
    /// error naming its field (see `decodeWholeNumber`).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            hash: try container.decode(String.self, forKey: .hash),
            size: try container.decodeWholeNumber(Int64.self, forKey: .size),
            chunkSize: try container.decodeWholeNumber(Int64.self, forKey: .chunkSize),
            chunks: try container.decode([Chunk].self, forKey: .chunks))
    }

    /// Why the asset cannot be stored, or nil when it is whole: its chunk sizes must add up to
    /// its size, every chunk must match its CRC-32, and its chunks must be all sealed (each
    /// holding exactly its size) or none (``isSealed``).
    package var damage: String? {
        let total = chunks.reduce(Int64(0)) { $0 + $1.size }
        guard total == size else { return "chunk sizes add up to \(total), not \(size)" }
        for (index, chunk) in chunks.enumerated() where CRC32.checksum(index: index, data: chunk.data) != chunk.crc32 {
            return "chunk \(index) fails its CRC-32"
        }
        return sealingDamage
    }

    /// The CRC-32 a chunk carries: over its index (8 bytes, little-endian), then its stored
    /// bytes, so swapped chunks fail too.
    public static func checksum(ofChunk index: Int, data: Data) -> UInt32 {
        CRC32.checksum(index: index, data: data)
    }

    /// The field value pointing at this asset.
    public var reference: CloudAssetReference { CloudAssetReference(hash: hash, size: size) }
}
