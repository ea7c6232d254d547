import Foundation

/// An asset exactly as StrataAssets stores it: its description and its chunks' stored bytes.
///
/// It moves content between databases without inflating and recompressing it (the sync
/// engine sends and receives assets this way). `Database.insertStoredAsset(_:)`
/// checks everything before it keeps anything: each chunk's CRC-32 and size, and the SHA-256 of
/// the whole content against ``id``.
public struct StoredAsset: Sendable, Hashable {
    /// The content's identifier: the SHA-256 of the uncompressed bytes.
    public var id: AssetID
    /// The uncompressed size in bytes.
    public var size: Int64
    /// The uncompressed size of every chunk but the last.
    public var chunkSize: Int
    /// How the chunks were compressed, and why.
    public var compression: AssetCompression
    public var compressionReason: String
    /// The chunks in order.
    public var chunks: [Chunk]

    /// One chunk as stored in its row; also the form a chunk travels in (it is `Codable`).
    public struct Chunk: Sendable, Hashable, Codable {
        /// The stored bytes: raw deflate or the content itself, as ``encoding`` says.
        public var data: Data
        /// 0: stored as is; 1: raw deflate.
        public var encoding: Int
        /// The uncompressed size.
        public var size: Int64
        /// The CRC-32 of the chunk's index (8 bytes, little-endian) followed by ``data``.
        public var crc32: UInt32

        public init(data: Data, encoding: Int, size: Int64, crc32: UInt32) {
            self.data = data
            self.encoding = encoding
            self.size = size
            self.crc32 = crc32
        }
    }

    public init(id: AssetID, size: Int64, chunkSize: Int, compression: AssetCompression, compressionReason: String, chunks: [Chunk]) {
        self.id = id
        self.size = size
        self.chunkSize = chunkSize
        self.compression = compression
        self.compressionReason = compressionReason
        self.chunks = chunks
    }
}
