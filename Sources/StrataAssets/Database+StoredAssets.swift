import Crypto
import Foundation
import StrataSQLite

extension Database {
    /// The asset's stored form, every chunk's checksum verified; nil when the database does not
    /// hold it.
    ///
    /// - Throws: ``AssetError/corrupted(asset:chunk:reason:)`` for a damaged row.
    public func storedAsset(_ id: AssetID) throws -> StoredAsset? {
        guard try AssetSchema.exists(self), try assetExists(id) else { return nil }
        let row = try AssetRow.findReadable(self, id: id)
        var chunks: [StoredAsset.Chunk] = []
        chunks.reserveCapacity(row.descriptor.chunkCount)
        for index in 0..<row.descriptor.chunkCount {
            let stored = try StoredChunk.find(self, asset: row, index: index)
            let actual = stored.data.withUnsafeBytes { ChunkChecksum.compute(index: index, stored: $0) }
            guard Int64(actual) == stored.crc32 else {
                throw AssetError.corrupted(
                    asset: id, chunk: index,
                    reason: .checksumMismatch(expected: UInt32(truncatingIfNeeded: stored.crc32), actual: actual))
            }
            chunks.append(
                StoredAsset.Chunk(
                    data: stored.data, encoding: stored.encoding, size: Int64(stored.size), crc32: actual))
        }
        let descriptor = row.descriptor
        return StoredAsset(
            id: id, size: descriptor.size, chunkSize: descriptor.chunkSize, compression: descriptor.compression,
            compressionReason: descriptor.compressionReason, chunks: chunks)
    }

    /// Stores an asset received in its stored form, unless the database holds it already.
    ///
    /// Nothing is kept unless every chunk passes its CRC-32, inflates to its recorded size, and
    /// the content's SHA-256 is ``StoredAsset/id``. The asset starts with no reference: insert
    /// the row that refers to it in the same transaction, or the next collection removes it.
    ///
    /// - Throws: ``AssetError/corrupted(asset:chunk:reason:)`` or
    ///   ``AssetError/unexpectedContent(expected:actual:)``.
    @discardableResult
    public func insertStoredAsset(_ asset: StoredAsset) throws -> AssetDescriptor {
        if try !AssetSchema.exists(self) { try AssetSchema.createTables(self) }
        if let existing = try AssetRow.fetch(self, id: asset.id) { return existing.descriptor }
        let storedSize = asset.chunks.reduce(Int64(0)) { $0 + Int64($1.data.count) }
        var descriptor: AssetDescriptor?
        try inSavepoint {
            try execute(
                sql: """
                    INSERT INTO strata_assets (sha256, size, storedSize, chunkSize, chunkCount, compression, compressionReason, referenceCount, createdAt)
                    VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)
                    """,
                arguments: [
                    asset.id, asset.size, storedSize, asset.chunkSize, asset.chunks.count, asset.compression.rawValue,
                    asset.compressionReason, Date().timeIntervalSince1970,
                ])
            let row = AssetRow(
                rowID: lastInsertedRowID,
                descriptor: AssetDescriptor(
                    id: asset.id, size: asset.size, storedSize: storedSize, chunkCount: asset.chunks.count,
                    chunkSize: asset.chunkSize, compression: asset.compression,
                    compressionReason: asset.compressionReason, referenceCount: 0))
            try row.validate()
            let decoder = ChunkDecoder()
            var hasher = SHA256()
            for (index, chunk) in asset.chunks.enumerated() {
                let stored = StoredChunk(
                    index: index, size: Int(chunk.size), encoding: chunk.encoding, crc32: Int64(chunk.crc32), data: chunk.data)
                hasher.update(data: try decoder.decode(stored, of: row))
                try execute(
                    sql: "INSERT INTO strata_asset_chunks (asset, chunk, size, encoding, crc32, data) VALUES (?, ?, ?, ?, ?, ?)",
                    arguments: [row.rowID, index, chunk.size, chunk.encoding, Int64(chunk.crc32), chunk.data])
            }
            let actual = AssetID(digest: hasher.finalize())
            guard actual == asset.id else { throw AssetError.unexpectedContent(expected: asset.id, actual: actual) }
            descriptor = row.descriptor
            return .commit
        }
        guard let descriptor else { throw AssetError.notFound(asset.id) }
        return descriptor
    }

    /// Whether ``trackAssetColumn(table:column:keyColumn:)`` tracks this column: its values are
    /// asset identifiers.
    public func isTrackedAssetColumn(table: String, column: String) throws -> Bool {
        try Bool.fetchOne(
            self, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?)",
            arguments: ["strata_asset_\(table)_\(column)_insert"]) ?? false
    }
}
