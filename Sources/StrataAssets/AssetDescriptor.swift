import Foundation

/// What is known about a stored asset without reading its bytes.
///
/// This is what a sync engine needs to upload an asset separately from the records that refer
/// to it (like CloudKit's `CKAsset`): the content hash to name it, the size to plan the transfer,
/// and, through ``AssetStore/open(_:)``, a stream of its bytes. It never needs the store's tables.
public struct AssetDescriptor: Hashable, Sendable, CustomStringConvertible {
    /// The asset's identifier, which is its content hash.
    public var id: AssetID
    /// The size of the uncompressed content, in bytes.
    public var size: Int64
    /// The bytes the chunks occupy in the database (compressed where compression paid).
    public var storedSize: Int64
    /// How many chunks the content is split into.
    public var chunkCount: Int
    /// The uncompressed size of every chunk but the last.
    public var chunkSize: Int
    /// Whether the content was compressed, decided once per asset from a sample.
    public var compression: AssetCompression
    /// Why ``compression`` was chosen: `format:jpeg`, `sample:0.97`, `disabled`, …
    public var compressionReason: String
    /// How many owners refer to the asset. An asset whose count drops to zero is deleted.
    public var referenceCount: Int

    /// The SHA-256 of the uncompressed content, as 32 bytes.
    public var sha256: Data { id.digestBytes }

    /// `storedSize / size`: 1 for uncompressed content, lower when compression paid.
    public var compressionRatio: Double {
        size == 0 ? 1 : Double(storedSize) / Double(size)
    }

    public var description: String {
        "asset \(id) (\(size) bytes, \(chunkCount) chunks, \(compression.rawValue), stored \(storedSize) bytes, \(referenceCount) references)"
    }
}

/// How an asset's chunks are stored.
public enum AssetCompression: String, Sendable, Hashable {
    /// Raw deflate, each chunk on its own. A chunk that does not shrink is still stored as is.
    case deflate
    /// Stored as is: the content is already compressed, or compression did not pay on the sample.
    case none
}
