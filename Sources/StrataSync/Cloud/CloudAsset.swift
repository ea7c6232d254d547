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

    /// One stored chunk, as StrataAssets keeps it.
    public struct Chunk: Hashable, Sendable, Codable {
        /// The chunk's bytes as stored.
        public var data: Data
        /// How `data` is encoded (StrataAssets' code: raw or zlib).
        public var encoding: Int
        /// The uncompressed size of the chunk.
        public var size: Int64
        /// The CRC-32 StrataAssets records: over the chunk's index (8 bytes, little-endian)
        /// followed by `data`. Checked on the way in.
        public var crc32: UInt32

        /// A chunk from its parts.
        public init(data: Data, encoding: Int, size: Int64, crc32: UInt32) {
            self.data = data
            self.encoding = encoding
            self.size = size
            self.crc32 = crc32
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

    /// The field value pointing at this asset.
    public var reference: CloudAssetReference { CloudAssetReference(hash: hash, size: size) }
}
