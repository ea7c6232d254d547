import Foundation
import StrataSQLite

/// Helpers for records whose columns hold ``AssetID``s.
///
/// Fetching a record reads only the identifier (64 characters); the content is read when one of
/// these is called, so records with large attachments stay cheap to list.
extension TableRecord {
    /// The descriptor of the asset a column refers to, or nil when the column is NULL.
    public func assetDescriptor(_ column: KeyPath<Self, AssetID?>, in db: Database) throws -> AssetDescriptor? {
        guard let id = self[keyPath: column] else { return nil }
        guard let descriptor = try db.assetDescriptor(id) else { throw AssetError.notFound(id) }
        return descriptor
    }

    /// The content of the asset a column refers to, verified, or nil when the column is NULL.
    public func assetData(_ column: KeyPath<Self, AssetID?>, in db: Database) throws -> Data? {
        try self[keyPath: column].map { try db.assetData($0) }
    }

    /// The content of the asset a column refers to, verified.
    public func assetData(_ column: KeyPath<Self, AssetID>, in db: Database) throws -> Data {
        try db.assetData(self[keyPath: column])
    }

    /// A chunked reader of the asset a column refers to, or nil when the column is NULL.
    public func openAsset(_ column: KeyPath<Self, AssetID?>, in store: AssetStore) throws -> AssetReader? {
        try self[keyPath: column].map { try store.open($0) }
    }

    /// A chunked reader of the asset a column refers to.
    public func openAsset(_ column: KeyPath<Self, AssetID>, in store: AssetStore) throws -> AssetReader {
        try store.open(self[keyPath: column])
    }
}
