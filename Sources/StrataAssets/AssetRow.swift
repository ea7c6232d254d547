import StrataSQLite

/// An asset row as stored: the public descriptor plus the integer id its chunks point at.
///
/// The integer id is internal: it changes if an asset is deleted and the same content stored
/// again, which is why readers remember it, to tell "deleted while I was reading" from a
/// missing chunk.
struct AssetRow: Sendable {
    var rowID: Int64
    var descriptor: AssetDescriptor

    static let selection = "id, sha256, size, storedSize, chunkSize, chunkCount, compression, compressionReason, referenceCount"

    init(rowID: Int64, descriptor: AssetDescriptor) {
        self.rowID = rowID
        self.descriptor = descriptor
    }

    init(row: Row) throws {
        rowID = try row[0]
        let text: String = try row[1]
        guard let id = AssetID(hexadecimal: text) else { throw AssetError.invalidIdentifier(text) }
        let compressionText: String = try row[6]
        descriptor = AssetDescriptor(
            id: id,
            size: try row[2],
            storedSize: try row[3],
            chunkCount: try row[5],
            chunkSize: try row[4],
            compression: AssetCompression(rawValue: compressionText) ?? .none,
            compressionReason: try row[7],
            referenceCount: try row[8])
        if AssetCompression(rawValue: compressionText) == nil {
            throw AssetError.corrupted(asset: id, chunk: nil, reason: .invalidMetadata("unknown compression \(compressionText)"))
        }
    }

    /// The asset with this identifier, or nil.
    static func fetch(_ db: Database, id: AssetID) throws -> AssetRow? {
        try db.fetchOne(sql: "SELECT \(selection) FROM strata_assets WHERE sha256 = ?", arguments: [id]) { try AssetRow(row: $0) }
    }

    /// The asset with this identifier, its metadata checked; throws ``AssetError/notFound(_:)``
    /// when there is none.
    static func find(_ db: Database, id: AssetID) throws -> AssetRow {
        guard let row = try fetch(db, id: id) else { throw AssetError.notFound(id) }
        try row.validate()
        return row
    }

    /// The asset with this identifier, ready to be read: its metadata checked, and its chunk rows
    /// checked against it, so every size a reader allocates from is known to be sane.
    ///
    /// Readers call this rather than ``find(_:id:)``: damage found here is reported before any
    /// byte is delivered or any buffer is allocated.
    static func findReadable(_ db: Database, id: AssetID) throws -> AssetRow {
        let row = try find(db, id: id)
        try ChunkRowSummary.fetch(db, assetRowID: row.rowID).check(against: row, in: db)
        return row
    }

    /// The uncompressed size chunk `index` must have. Only meaningful once ``validate()`` passed.
    func expectedSize(ofChunk index: Int) -> Int {
        let chunkSize = Int64(descriptor.chunkSize)
        let start = Int64(index) * chunkSize
        return Int(min(chunkSize, descriptor.size - start))
    }

    /// Checks that the size, chunk size and chunk count are within the limits StrataAssets
    /// writes and agree with each other, so sizes derived from them are sane before any buffer
    /// is allocated from them.
    ///
    /// The row is read from a file anyone may have damaged: each value is checked before it is
    /// used in arithmetic, so no check can overflow.
    func validate() throws {
        let d = descriptor
        func corrupted(_ detail: String) -> AssetError {
            AssetError.corrupted(asset: d.id, chunk: nil, reason: .invalidMetadata(detail))
        }
        guard d.size >= 0 else { throw corrupted("negative size \(d.size)") }
        guard d.size <= Int64(Int.max) else { throw corrupted("size \(d.size) exceeds the address space") }
        guard d.chunkSize > 0, d.chunkSize <= AssetStorageOptions.maximumChunkSize else {
            throw corrupted("chunk size \(d.chunkSize) outside 1...\(AssetStorageOptions.maximumChunkSize)")
        }
        guard d.storedSize >= 0 else { throw corrupted("negative stored size \(d.storedSize)") }
        let chunkSize = Int64(d.chunkSize)
        let expectedCount = d.size / chunkSize + (d.size % chunkSize == 0 ? 0 : 1)
        guard Int64(d.chunkCount) == expectedCount else {
            throw corrupted("chunk count \(d.chunkCount), but size \(d.size) at chunk size \(d.chunkSize) makes \(expectedCount)")
        }
    }
}
