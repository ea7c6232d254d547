import StrataSQLite

/// What an asset's chunk rows add up to: how many there are, their index range and their
/// recorded sizes, read in one aggregate query before a reader allocates anything.
///
/// The asset row alone cannot prove its chunks are sane: a damaged file can record a size that
/// agrees with the row's chunk count but no chunk row holds. Checking the rows' count and summed
/// sizes against the asset row up front turns such damage into an error before the first byte
/// is read, and bounds every size a reader allocates from.
struct ChunkRowSummary {
    var count: Int
    var lowestIndex: Int64?
    var highestIndex: Int64?
    var smallestSize: Int64?
    var largestSize: Int64?
    /// `total()`, not `sum()`: SQLite's integer `sum()` throws on overflow, and a damaged size
    /// column must produce a corruption error, not a database error.
    var totalSize: Double

    static func fetch(_ db: Database, assetRowID: Int64) throws -> ChunkRowSummary {
        let summary = try db.fetchOne(
            sql: """
                SELECT count(*), min(chunk), max(chunk), min(size), max(size), total(size)
                FROM strata_asset_chunks WHERE asset = ?
                """,
            arguments: [assetRowID]
        ) { row in
            ChunkRowSummary(
                count: try row[0], lowestIndex: try row[1], highestIndex: try row[2],
                smallestSize: try row[3], largestSize: try row[4], totalSize: try row[5])
        }
        // An aggregate query without GROUP BY always returns one row.
        return summary ?? ChunkRowSummary(count: 0, totalSize: 0)
    }

    /// Throws ``AssetError/corrupted(asset:chunk:reason:)`` unless the rows are exactly the
    /// chunks `asset` records: indexes 0 to chunkCount - 1, each at most the chunk size and never
    /// empty, summing to the asset's size. `asset` must have passed ``AssetRow/validate()``.
    func check(against asset: AssetRow, in db: Database) throws {
        let descriptor = asset.descriptor
        let chunkSize = Int64(descriptor.chunkSize)
        let isConsistent: Bool
        if count == 0 {
            isConsistent = descriptor.chunkCount == 0
        } else {
            isConsistent =
                count == descriptor.chunkCount
                && lowestIndex == 0 && highestIndex == Int64(count - 1)
                && (smallestSize ?? 0) >= 1 && (largestSize ?? 0) <= chunkSize
                && totalSize == Double(descriptor.size)
        }
        guard !isConsistent else { return }
        // The aggregate says something is wrong; name the first chunk that is, so the error
        // points at the damage (this path runs only on damaged assets, so its cost is moot).
        if let damage = try firstDamagedChunk(of: asset, in: db) { throw damage }
        throw AssetError.corrupted(
            asset: descriptor.id, chunk: nil,
            reason: .invalidMetadata(
                "\(count) chunk rows holding \(totalSize) bytes, but chunk count \(descriptor.chunkCount) and size \(descriptor.size)"))
    }

    /// The error for the first chunk whose row is missing, out of range or of the wrong size.
    private func firstDamagedChunk(of asset: AssetRow, in db: Database) throws -> AssetError? {
        let id = asset.descriptor.id
        let chunkCount = asset.descriptor.chunkCount
        let rows = try db.fetchAll(
            sql: "SELECT chunk, size FROM strata_asset_chunks WHERE asset = ? ORDER BY chunk",
            arguments: [asset.rowID]
        ) { row in (index: try row[0] as Int64, size: try row[1] as Int64) }
        var expectedIndex = 0
        for row in rows {
            guard row.index >= 0, row.index < Int64(chunkCount) else {
                return AssetError.corrupted(
                    asset: id, chunk: Int(row.index),
                    reason: .invalidChunk("row with index \(row.index), outside the asset's \(chunkCount) chunks"))
            }
            if row.index > Int64(expectedIndex) {
                return AssetError.corrupted(asset: id, chunk: expectedIndex, reason: .invalidChunk("missing row"))
            }
            let expectedSize = asset.expectedSize(ofChunk: expectedIndex)
            guard row.size == Int64(expectedSize) else {
                return AssetError.corrupted(
                    asset: id, chunk: expectedIndex,
                    reason: .invalidChunk("recorded size \(row.size), expected \(expectedSize)"))
            }
            expectedIndex += 1
        }
        if expectedIndex < chunkCount {
            return AssetError.corrupted(asset: id, chunk: expectedIndex, reason: .invalidChunk("missing row"))
        }
        return nil
    }
}
