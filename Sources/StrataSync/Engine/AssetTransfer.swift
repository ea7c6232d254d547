import StrataAssets
import StrataSQLite

/// Moves asset content between a device and the cloud by hash, in the stored (compressed) form:
/// uploaded once for all records and devices that use it, downloaded only when missing here.
struct AssetTransfer {
    let database: any DatabaseWriter
    let cloud: any CloudDatabase

    /// The asset references of some records.
    static func references(in records: [CloudRecord]) -> [CloudAssetReference] {
        var seen: Set<String> = []
        var references: [CloudAssetReference] = []
        for record in records {
            for value in record.fields.values {
                if case .asset(let reference) = value, seen.insert(reference.hash).inserted { references.append(reference) }
            }
        }
        return references
    }

    /// Uploads the content of the references the cloud lacks, one asset at a time so memory
    /// stays bounded by the largest asset.
    func upload(_ references: [CloudAssetReference]) async throws {
        guard !references.isEmpty else { return }
        let missing = try await cloud.missingAssets(references.map(\.hash))
        for hash in references.map(\.hash) where missing.contains(hash) {
            guard let id = AssetID(hexadecimal: hash),
                  let stored = try await database.read({ db in try db.storedAsset(id) })
            else { continue }
            try await cloud.uploadAssets([CloudAsset(stored)])
        }
    }

    /// Downloads the content of the references this device lacks.
    func download(_ references: [CloudAssetReference]) async throws -> [StoredAsset] {
        var assets: [StoredAsset] = []
        for reference in references {
            guard let id = AssetID(hexadecimal: reference.hash),
                  try await !database.read({ db in try db.assetExists(id) })
            else { continue }
            let asset = try await cloud.fetchAsset(reference.hash)
            assets.append(try StoredAsset(asset))
        }
        return assets
    }
}

extension CloudAsset {
    init(_ stored: StoredAsset) {
        self.init(
            hash: stored.id.hexadecimal, size: stored.size, chunkSize: Int64(stored.chunkSize),
            chunks: stored.chunks.map { Chunk(data: $0.data, encoding: $0.encoding, size: $0.size, crc32: $0.crc32) })
    }
}

extension StoredAsset {
    /// The stored form of a downloaded asset; ``StrataSQLite/Database/insertStoredAsset(_:)``
    /// checks it before keeping it.
    init(_ asset: CloudAsset) throws {
        guard let id = AssetID(hexadecimal: asset.hash) else { throw CloudError.invalidAsset(asset.hash, reason: "not a SHA-256") }
        let compressed = asset.chunks.contains { $0.encoding != 0 }
        self.init(
            id: id, size: asset.size, chunkSize: Int(asset.chunkSize), compression: compressed ? .deflate : .none,
            compressionReason: "synced",
            chunks: asset.chunks.map { Chunk(data: $0.data, encoding: $0.encoding, size: $0.size, crc32: $0.crc32) })
    }
}
