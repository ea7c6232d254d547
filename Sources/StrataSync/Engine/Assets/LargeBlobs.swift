import Foundation
import StrataAssets
import StrataSQLite

/// Large values of plain BLOB columns travel as assets: the record carries a reference, the
/// content goes up once by hash (in raw chunks) and comes back as the column's bytes.
enum LargeBlobs {
    /// The chunk size of the assets made from BLOB values.
    static let chunkSize = 1 << 20

    /// The asset of a BLOB value: its content hash, raw chunks signed as StrataAssets signs them.
    static func asset(of data: Data) -> CloudAsset {
        let id = AssetID(of: data)
        var chunks: [CloudAsset.Chunk] = []
        var start = data.startIndex
        var index = 0
        while start < data.endIndex {
            let end = min(start + chunkSize, data.endIndex)
            let bytes = Data(data[start..<end])
            chunks.append(
                CloudAsset.Chunk(
                    data: bytes, encoding: 0, size: Int64(bytes.count), crc32: CloudAsset.checksum(ofChunk: index, data: bytes)))
            start = end
            index += 1
        }
        return CloudAsset(hash: id.hexadecimal, size: Int64(data.count), chunkSize: Int64(chunkSize), chunks: chunks)
    }

    /// The bytes of a downloaded asset, checked chunk by chunk and against its hash by
    /// StrataAssets (through a scratch in-memory database), whatever the sender's encoding.
    static func content(of asset: CloudAsset) async throws -> Data {
        let scratch = try DatabaseQueue()
        defer { scratch.close() }
        return try await scratch.write { db in
            let stored = try StoredAsset(asset)
            try db.insertStoredAsset(stored)
            return try db.assetData(stored.id)
        }
    }
}
