import Foundation
import StrataAssets
import StrataSQLite

/// Moves asset content between a device and the cloud by hash, in the stored (compressed) form:
/// uploaded once for all records and devices that use it, downloaded only when missing here.
struct AssetTransfer {
    let database: any DatabaseWriter
    let cloud: any CloudDatabase

    /// Moves the assets of `zone`'s records: through encryption, content is named and sealed
    /// with that zone's key.
    init(database: any DatabaseWriter, cloud: any CloudDatabase, zone: CloudZoneID) {
        self.database = database
        self.cloud = (cloud as? EncryptedCloudDatabase)?.assets(of: zone) ?? cloud
    }

    /// The asset references of some records: all of them, or only those in asset columns
    /// (whose content belongs in the asset store; the others are large BLOB values).
    static func references(in records: [CloudRecord], assetColumnsOf schema: SyncSchema? = nil) -> [CloudAssetReference] {
        var seen: Set<String> = []
        var references: [CloudAssetReference] = []
        for record in records {
            let assetColumns = schema?.table(named: record.type)?.assetColumns
            for (column, value) in record.fields {
                if let assetColumns, !assetColumns.contains(column) { continue }
                if case .asset(let reference) = value, seen.insert(reference.hash).inserted { references.append(reference) }
            }
        }
        return references
    }

    /// Uploads the content of the references the cloud lacks, one asset at a time so memory
    /// stays bounded by the largest asset: from the asset store, or from the records' large
    /// BLOB values.
    func upload(_ references: [CloudAssetReference], blobs: [String: Data] = [:]) async throws {
        guard !references.isEmpty else { return }
        let missing = try await cloud.missingAssets(references.map(\.hash))
        for hash in references.map(\.hash) where missing.contains(hash) {
            if let data = blobs[hash] {
                try await cloud.uploadAssets([LargeBlobs.asset(of: data)])
                continue
            }
            guard let id = AssetID(hexadecimal: hash),
                let stored = try await database.read({ db in try db.storedAsset(id) })
            else { continue }
            try await cloud.uploadAssets([CloudAsset(stored)])
        }
    }

    /// The large BLOB values of records about to be sent, by hash: the content of references
    /// that are not in the asset store.
    static func largeBlobs(in records: [CloudRecord], schema: SyncSchema, database: any DatabaseWriter) async throws -> [String: Data] {
        var wanted: [(table: SyncedTable, column: String, key: String, hash: String)] = []
        for record in records {
            guard let table = schema.table(named: record.type), let name = RecordName(record.id.name) else { continue }
            for (column, value) in record.fields where !table.assetColumns.contains(column) {
                if case .asset(let reference) = value { wanted.append((table, column, name.primaryKey, reference.hash)) }
            }
        }
        guard !wanted.isEmpty else { return [:] }
        let requests = wanted
        return try await database.read { db in
            var blobs: [String: Data] = [:]
            for item in requests {
                let data = try Data.fetchOne(
                    db,
                    sql:
                        "SELECT \(item.column.quotedIdentifier) FROM main.\(item.table.name.quotedIdentifier) WHERE \(item.table.primaryKey.quotedIdentifier) = ?",
                    arguments: [item.key])
                if let data, AssetID(of: data).hexadecimal == item.hash { blobs[item.hash] = data }
            }
            return blobs
        }
    }

    /// The content of large BLOB values among some records, by hash (references in columns
    /// that are not asset columns).
    func downloadBlobs(in records: [CloudRecord], schema: SyncSchema) async throws -> [String: Data] {
        var blobs: [String: Data] = [:]
        for record in records {
            guard let table = schema.table(named: record.type) else { continue }
            for (column, value) in record.fields where !table.assetColumns.contains(column) {
                guard case .asset(let reference) = value, blobs[reference.hash] == nil else { continue }
                blobs[reference.hash] = try await LargeBlobs.content(of: try await cloud.fetchAsset(reference.hash))
            }
        }
        return blobs
    }

    /// Downloads the content of the references this device lacks (into its asset store).
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
            chunks: stored.chunks.map(CloudAsset.Chunk.init))
    }
}

extension CloudAsset.Chunk {
    /// A stored chunk as it travels: the same bytes, encoding, size and CRC-32.
    init(_ stored: StoredAsset.Chunk) {
        self.init(data: stored.data, encoding: stored.encoding, size: stored.size, crc32: stored.crc32)
    }
}

extension StoredAsset.Chunk {
    /// A chunk that arrived, to store as it is.
    init(_ chunk: CloudAsset.Chunk) {
        self.init(data: chunk.data, encoding: chunk.encoding, size: chunk.size, crc32: chunk.crc32)
    }
}

extension StoredAsset {
    /// The stored form of a downloaded asset; `Database.insertStoredAsset(_:)`
    /// checks it before keeping it.
    init(_ asset: CloudAsset) throws {
        guard let id = AssetID(hexadecimal: asset.hash) else { throw CloudError.invalidAsset(asset.hash, reason: "not a SHA-256") }
        let compressed = asset.chunks.contains { $0.encoding != 0 }
        self.init(
            id: id, size: asset.size, chunkSize: Int(asset.chunkSize), compression: compressed ? .deflate : .none,
            compressionReason: "synced", chunks: asset.chunks.map(StoredAsset.Chunk.init))
    }
}
