import StrataSQLite

extension Database {
    /// Makes `owner` refer to an asset, replacing the asset it referred to before (whose count
    /// drops, and which is deleted if that was its last reference).
    ///
    /// - Throws: ``AssetError/notFound(_:)`` when no such asset is stored.
    public func setAssetReference(_ id: AssetID, owner: AssetOwner) throws {
        guard try assetExists(id) else { throw AssetError.notFound(id) }
        // An upsert, not INSERT OR REPLACE: REPLACE deletes the old row without firing the
        // delete trigger (unless recursive_triggers is on), so the old asset's count would leak.
        try execute(
            sql: """
                INSERT INTO strata_asset_references (asset, ownerTable, ownerKey, name) VALUES (?, ?, ?, ?)
                ON CONFLICT (ownerTable, ownerKey, name) DO UPDATE SET asset = excluded.asset
                """,
            arguments: [id, owner.table, owner.key, owner.name])
    }

    /// Removes an owner's reference. The asset is deleted with its last reference.
    /// Returns whether the owner referred to an asset.
    @discardableResult
    public func removeAssetReference(owner: AssetOwner) throws -> Bool {
        try execute(
            sql: "DELETE FROM strata_asset_references WHERE ownerTable = ? AND ownerKey = ? AND name = ?",
            arguments: [owner.table, owner.key, owner.name])
        return changesCount > 0
    }

    /// Removes every reference held by one row (all its slots). Returns how many were removed.
    @discardableResult
    public func removeAssetReferences(table: String, key: String) throws -> Int {
        try execute(
            sql: "DELETE FROM strata_asset_references WHERE ownerTable = ? AND ownerKey = ?",
            arguments: [table, key])
        return changesCount
    }

    /// The asset an owner refers to, or nil.
    public func assetReference(owner: AssetOwner) throws -> AssetID? {
        try AssetID.fetchOne(
            self, sql: "SELECT asset FROM strata_asset_references WHERE ownerTable = ? AND ownerKey = ? AND name = ?",
            arguments: [owner.table, owner.key, owner.name])
    }

    /// The references held by the rows of a table, or by one row when `key` is given, ordered
    /// by key and slot name.
    public func assetReferences(table: String, key: String? = nil) throws -> [AssetReference] {
        let sql = """
            SELECT asset, ownerTable, ownerKey, name FROM strata_asset_references
            WHERE ownerTable = ?\(key == nil ? "" : " AND ownerKey = ?") ORDER BY ownerKey, name
            """
        let arguments: StatementArguments = key.map { [table, $0] } ?? [table]
        return try fetchAll(sql: sql, arguments: arguments, Self.decodeReference)
    }

    /// The owners that refer to an asset.
    public func assetReferences(to id: AssetID) throws -> [AssetReference] {
        try fetchAll(
            sql:
                "SELECT asset, ownerTable, ownerKey, name FROM strata_asset_references WHERE asset = ? ORDER BY ownerTable, ownerKey, name",
            arguments: [id], Self.decodeReference)
    }

    /// Every stored asset, ordered by identifier. Reads the asset rows only, never content:
    /// a sync engine can compare this list with what it has uploaded.
    public func assetDescriptors() throws -> [AssetDescriptor] {
        try fetchAll(sql: "SELECT \(AssetRow.selection) FROM strata_assets WHERE sha256 NOT LIKE 'pending:%' ORDER BY sha256") {
            try AssetRow(row: $0).descriptor
        }
    }

    /// Deletes an asset that no owner refers to. Returns false when there was no such asset.
    ///
    /// - Throws: ``AssetError/stillReferenced(_:referenceCount:)`` when owners refer to it:
    ///   remove their references instead, and the asset goes with the last one.
    @discardableResult
    public func deleteAsset(_ id: AssetID) throws -> Bool {
        guard let asset = try AssetRow.fetch(self, id: id) else { return false }
        guard asset.descriptor.referenceCount <= 0 else {
            throw AssetError.stillReferenced(id, referenceCount: asset.descriptor.referenceCount)
        }
        try execute(sql: "DELETE FROM strata_assets WHERE id = ?", arguments: [asset.rowID])
        return true
    }

    /// Deletes every asset no owner refers to (stored without an owner and never referenced).
    /// Returns how many were deleted.
    ///
    /// Do not run it between putting an asset without an owner and inserting the record that
    /// refers to it in another transaction: put both in one `write`, or pass the owner.
    @discardableResult
    public func deleteUnreferencedAssets() throws -> Int {
        try execute(sql: "DELETE FROM strata_assets WHERE referenceCount <= 0 AND sha256 NOT LIKE 'pending:%'")
        return changesCount
    }

    private static func decodeReference(_ row: Row) throws -> AssetReference {
        let text: String = try row[0]
        guard let id = AssetID(hexadecimal: text) else { throw AssetError.invalidIdentifier(text) }
        let table: String = try row[1]
        let key: String = try row[2]
        let name: String = try row[3]
        return AssetReference(asset: id, owner: AssetOwner(table: table, key: key, name: name))
    }
}
