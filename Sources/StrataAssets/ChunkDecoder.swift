import Foundation
import StrataSQLite

/// One chunk row as read from the database, before any check.
struct StoredChunk: Sendable {
    var index: Int
    var size: Int
    var encoding: Int
    var crc32: Int64
    var data: Data

    /// The chunk's row, or nil when there is none.
    static func fetch(_ db: Database, assetRowID: Int64, index: Int) throws -> StoredChunk? {
        try db.fetchOne(
            sql: "SELECT size, encoding, crc32, data FROM strata_asset_chunks WHERE asset = ? AND chunk = ?",
            arguments: [assetRowID, index]
        ) { row in
            StoredChunk(index: index, size: try row[0], encoding: try row[1], crc32: try row[2], data: try row[3])
        }
    }

    /// The chunk's row, or an error that says why it cannot be read: the asset was deleted
    /// (``AssetError/notFound(_:)``), or its row is missing (``AssetError/corrupted(asset:chunk:reason:)``).
    static func find(_ db: Database, asset: AssetRow, index: Int) throws -> StoredChunk {
        if let chunk = try fetch(db, assetRowID: asset.rowID, index: index) {
            return chunk
        }
        let stillExists =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM strata_assets WHERE id = ? AND sha256 = ?)",
                arguments: [asset.rowID, asset.descriptor.id]) ?? false
        guard stillExists else { throw AssetError.notFound(asset.descriptor.id) }
        throw AssetError.corrupted(asset: asset.descriptor.id, chunk: index, reason: .invalidChunk("missing row"))
    }
}

/// Checks and decodes chunks. Every byte it hands out has passed the chunk's CRC-32 and, when
/// deflated, inflated to exactly the recorded size; any failure is a typed error naming the
/// asset and the chunk, never partial or wrong output.
final class ChunkDecoder {
    private var inflater: ZlibInflater?

    init() {}

    /// Decodes `stored`, chunk `stored.index` of `asset`, into `output`, whose count must be
    /// the chunk's expected size.
    func decode(_ stored: StoredChunk, of asset: AssetRow, into output: UnsafeMutableRawBufferPointer) throws {
        let id = asset.descriptor.id
        let index = stored.index
        guard stored.size == output.count else {
            throw AssetError.corrupted(
                asset: id, chunk: index, reason: .invalidChunk("recorded size \(stored.size), expected \(output.count)"))
        }
        guard let encoding = ChunkEncoding(rawValue: stored.encoding) else {
            throw AssetError.corrupted(asset: id, chunk: index, reason: .invalidChunk("unknown encoding \(stored.encoding)"))
        }
        try stored.data.withUnsafeBytes { bytes in
            let actual = ChunkChecksum.compute(index: index, stored: bytes)
            guard Int64(actual) == stored.crc32 else {
                throw AssetError.corrupted(
                    asset: id, chunk: index,
                    reason: .checksumMismatch(expected: UInt32(truncatingIfNeeded: stored.crc32), actual: actual))
            }
            switch encoding {
            case .stored:
                guard bytes.count == output.count else {
                    throw AssetError.corrupted(
                        asset: id, chunk: index, reason: .invalidChunk("\(bytes.count) stored bytes, expected \(output.count)"))
                }
                if let source = bytes.baseAddress, let destination = output.baseAddress {
                    destination.copyMemory(from: source, byteCount: bytes.count)
                }
            case .deflate:
                let inflater = try self.inflater ?? ZlibInflater()
                self.inflater = inflater
                do {
                    try inflater.inflate(bytes, into: output)
                } catch {
                    throw AssetError.corrupted(asset: id, chunk: index, reason: .invalidCompressedData)
                }
            }
        }
    }

    /// Decodes a chunk into new memory.
    ///
    /// The buffer is sized from the asset row, never from the chunk row, and only after the
    /// chunk row's recorded size agreed with it: a damaged size column cannot size an allocation.
    func decode(_ stored: StoredChunk, of asset: AssetRow) throws -> Data {
        let expectedSize = asset.expectedSize(ofChunk: stored.index)
        guard stored.size == expectedSize else {
            throw AssetError.corrupted(
                asset: asset.descriptor.id, chunk: stored.index,
                reason: .invalidChunk("recorded size \(stored.size), expected \(expectedSize)"))
        }
        guard expectedSize >= 0, expectedSize <= AssetStorageOptions.maximumChunkSize else {
            throw AssetError.corrupted(
                asset: asset.descriptor.id, chunk: stored.index,
                reason: .invalidChunk("size \(expectedSize) outside 0...\(AssetStorageOptions.maximumChunkSize)"))
        }
        var data = Data(count: expectedSize)
        try data.withUnsafeMutableBytes { output in
            try decode(stored, of: asset, into: output)
        }
        return data
    }
}
