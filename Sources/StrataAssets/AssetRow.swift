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

    /// The asset with this identifier; throws ``AssetError/notFound(_:)`` when there is none.
    static func find(_ db: Database, id: AssetID) throws -> AssetRow {
        guard let row = try fetch(db, id: id) else { throw AssetError.notFound(id) }
        try row.validate()
        return row
    }

    /// The uncompressed size chunk `index` must have.
    func expectedSize(ofChunk index: Int) -> Int {
        let chunkSize = Int64(descriptor.chunkSize)
        let start = Int64(index) * chunkSize
        return Int(min(chunkSize, descriptor.size - start))
    }

    /// Checks that the size, chunk size and chunk count agree, so chunk sizes derived from them
    /// are sane before any buffer is allocated from them.
    func validate() throws {
        let d = descriptor
        let expectedCount = d.chunkSize > 0 ? (d.size + Int64(d.chunkSize) - 1) / Int64(d.chunkSize) : -1
        guard d.size >= 0, d.chunkSize > 0, Int64(d.chunkCount) == expectedCount else {
            throw AssetError.corrupted(
                asset: d.id, chunk: nil,
                reason: .invalidMetadata("size \(d.size), chunk size \(d.chunkSize), chunk count \(d.chunkCount)"))
        }
    }
}
