import Foundation
import StrataSQLite

/// Large binary values stored in a database: put bytes or a file, get back an ``AssetID``; read
/// the bytes whole or as a stream of chunks; refer to them from records.
///
/// ```swift
/// let store = try AssetStore(pool)
/// let avatar = try store.put(contentsOf: imageURL, owner: AssetOwner(table: "players", key: player.id, name: "avatar"))
/// let bytes = try store.get(avatar.id)
/// for try await chunk in store.chunks(avatar.id) { … }
/// ```
///
/// Content is addressed by its SHA-256, so the same bytes are stored once however many owners
/// refer to them, and each reference is counted: an asset is deleted with its last reference.
/// Content is split into chunks (256 KiB by default), each deflated on its own unless a sample
/// shows compression does not pay, and checked on every read.
///
/// The store's methods each run in their own transaction. To put an asset and insert the record
/// that refers to it atomically, use the `Database` methods (`Database.putAsset(_:owner:options:)`
/// and friends) inside one `write { db in }`.
public final class AssetStore: Sendable {
    /// The database the assets live in.
    public let writer: any DatabaseWriter
    /// How new assets are chunked and compressed.
    public let options: AssetStorageOptions

    /// Opens the store, creating its tables if they do not exist yet.
    ///
    /// The tables' names start with `strata_`, which the migrator's
    /// `eraseDatabaseOnSchemaChange` comparison ignores: opening the store outside your
    /// migrations never reads as a schema change.
    public init(_ writer: some DatabaseWriter, options: AssetStorageOptions = AssetStorageOptions()) throws {
        self.writer = writer
        self.options = options.validated
        let exists = try writer.read { db in try AssetSchema.exists(db) }
        if !exists {
            try writer.write { db in try AssetSchema.createTables(db) }
        }
    }

    // MARK: - Putting

    /// Stores bytes (or finds them already stored). See `Database.putAsset(_:owner:options:)`.
    @discardableResult
    public func put(_ data: Data, owner: AssetOwner? = nil) throws -> AssetDescriptor {
        let options = self.options
        return try writer.write { db in try db.putAsset(data, owner: owner, options: options) }
    }

    /// Stores bytes (or finds them already stored).
    @discardableResult
    public func put(_ data: Data, owner: AssetOwner? = nil) async throws -> AssetDescriptor {
        let options = self.options
        return try await writer.write { db in try db.putAsset(data, owner: owner, options: options) }
    }

    /// Stores a file's contents, a chunk at a time. See `Database.putAsset(contentsOf:owner:options:)`.
    @discardableResult
    public func put(contentsOf url: URL, owner: AssetOwner? = nil) throws -> AssetDescriptor {
        let options = self.options
        return try writer.write { db in try db.putAsset(contentsOf: url, owner: owner, options: options) }
    }

    /// Stores a file's contents, a chunk at a time.
    @discardableResult
    public func put(contentsOf url: URL, owner: AssetOwner? = nil) async throws -> AssetDescriptor {
        let options = self.options
        return try await writer.write { db in try db.putAsset(contentsOf: url, owner: owner, options: options) }
    }

    /// Stores bytes produced by `body`, a piece at a time. See
    /// `Database.putAsset(owner:options:expecting:writing:)`.
    @discardableResult
    public func put(
        owner: AssetOwner? = nil, expecting expected: AssetID? = nil, writing body: (borrowing AssetWriter) throws -> Void
    ) throws -> AssetDescriptor {
        let options = self.options
        return try writer.write { db in try db.putAsset(owner: owner, options: options, expecting: expected, writing: body) }
    }

    // MARK: - Reading

    /// The asset with this identifier, or nil.
    public func descriptor(_ id: AssetID) throws -> AssetDescriptor? {
        try writer.read { db in try db.assetDescriptor(id) }
    }

    /// The asset with this identifier, or nil.
    public func descriptor(_ id: AssetID) async throws -> AssetDescriptor? {
        try await writer.read { db in try db.assetDescriptor(id) }
    }

    /// The whole content, verified. Holds it all in memory: use ``open(_:)`` or ``chunks(_:)``
    /// for large assets.
    public func get(_ id: AssetID) throws -> Data {
        try writer.read { db in try db.assetData(id) }
    }

    /// The whole content, verified.
    public func get(_ id: AssetID) async throws -> Data {
        try await writer.read { db in try db.assetData(id) }
    }

    /// A reader that returns the content a chunk at a time.
    ///
    /// - Throws: ``AssetError/notFound(_:)`` when the asset is not stored, or
    ///   ``AssetError/corrupted(asset:chunk:reason:)`` when its metadata disagrees with itself or
    ///   with its chunk rows (checked before any chunk is read).
    public func open(_ id: AssetID) throws -> AssetReader {
        let asset = try writer.read { db in try AssetRow.findReadable(db, id: id) }
        return AssetReader(database: writer, asset: asset)
    }

    /// The content as an asynchronous sequence of verified chunks.
    public func chunks(_ id: AssetID) -> AssetChunks {
        AssetChunks(database: writer, id: id)
    }

    /// Writes the content to a file, a chunk at a time, within one read transaction.
    public func export(_ id: AssetID, to url: URL) throws {
        try writer.read { db in try db.exportAsset(id, to: url) }
    }

    /// Every stored asset, ordered by identifier.
    public func descriptors() throws -> [AssetDescriptor] {
        try writer.read { db in try db.assetDescriptors() }
    }

    // MARK: - References and deletion

    /// Makes `owner` refer to an asset, releasing the asset it referred to before.
    public func setReference(_ id: AssetID, owner: AssetOwner) throws {
        try writer.write { db in try db.setAssetReference(id, owner: owner) }
    }

    /// Removes an owner's reference; the asset is deleted with its last reference.
    @discardableResult
    public func delete(owner: AssetOwner) throws -> Bool {
        try writer.write { db in try db.removeAssetReference(owner: owner) }
    }

    /// Deletes an asset no owner refers to.
    ///
    /// - Throws: ``AssetError/stillReferenced(_:referenceCount:)`` if owners refer to it.
    @discardableResult
    public func delete(_ id: AssetID) throws -> Bool {
        try writer.write { db in try db.deleteAsset(id) }
    }

    /// Deletes every asset no owner refers to. Returns how many were deleted.
    @discardableResult
    public func deleteUnreferenced() throws -> Int {
        try writer.write { db in try db.deleteUnreferencedAssets() }
    }

    /// The references held by a table's rows, or by one row.
    public func references(table: String, key: String? = nil) throws -> [AssetReference] {
        try writer.read { db in try db.assetReferences(table: table, key: key) }
    }

    /// The assets one row refers to, with their descriptors, ordered by slot name.
    public func assets(ownedBy table: String, key: String) throws -> [(name: String, descriptor: AssetDescriptor)] {
        try writer.read { db in
            try db.assetReferences(table: table, key: key).compactMap { reference in
                try db.assetDescriptor(reference.asset).map { (reference.owner.name, $0) }
            }
        }
    }

    /// The owners that refer to an asset.
    public func references(to id: AssetID) throws -> [AssetReference] {
        try writer.read { db in try db.assetReferences(to: id) }
    }
}
