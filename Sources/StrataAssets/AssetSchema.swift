import StrataSQLite

/// The tables, indexes and triggers of the asset store (format described in
/// Documentation/Assets.md).
///
/// The schema is created idempotently (`IF NOT EXISTS`), either by ``AssetStore/init(_:options:)``
/// or by the migration ``AssetSchema/registerMigration(in:)`` adds to your own migrator. Either
/// works with `eraseDatabaseOnSchemaChange`: its comparison ignores objects named `strata_…`
/// (`Database.reservedNamePrefix`), so tables the store creates outside your migrations never
/// read as a schema change.
public enum AssetSchema {
    /// The identifier of the migration that creates the tables.
    public static let migrationIdentifier = "strata_assets_v1"
    /// The table of assets, one row each.
    public static let assetsTable = "strata_assets"
    /// The table of chunks, one row per chunk of every asset.
    public static let chunksTable = "strata_asset_chunks"
    /// The table of references, one row per owner slot.
    public static let referencesTable = "strata_asset_references"

    /// Adds the asset tables' migration to a migrator, so they are created in the same run as
    /// your tables and before any migration of yours that tracks an asset column.
    public static func registerMigration(in migrator: inout DatabaseMigrator) {
        migrator.registerMigration(migrationIdentifier) { db in
            try createTables(db)
        }
    }

    /// Creates the tables, indexes and triggers that do not exist yet.
    public static func createTables(_ db: Database) throws {
        try db.execute(sql: version1)
    }

    /// Whether the tables exist.
    static func exists(_ db: Database) throws -> Bool {
        try db.tableExists(assetsTable) && db.tableExists(chunksTable) && db.tableExists(referencesTable)
    }

    /// Version 1.
    ///
    /// - `strata_assets.sha256` is the public identifier. An asset being written has a
    ///   provisional `pending:` value until its hash is known (see `AssetIngest`).
    /// - Chunks point at the asset's integer id, which keeps their primary key small.
    /// - The reference count is kept by triggers on the references table, so a reference removed
    ///   by any statement (including a foreign key cascade or a trigger on a user table) is
    ///   counted; the last one deletes the asset, and deleting an asset deletes its chunks.
    ///   Triggers rather than foreign key actions do this because they run whether or not the
    ///   connection enables `PRAGMA foreign_keys`.
    static let version1 = """
        CREATE TABLE IF NOT EXISTS strata_assets (
            id INTEGER PRIMARY KEY,
            sha256 TEXT NOT NULL UNIQUE,
            size INTEGER NOT NULL,
            storedSize INTEGER NOT NULL,
            chunkSize INTEGER NOT NULL,
            chunkCount INTEGER NOT NULL,
            compression TEXT NOT NULL,
            compressionReason TEXT NOT NULL,
            referenceCount INTEGER NOT NULL DEFAULT 0,
            createdAt REAL NOT NULL
        ) STRICT;
        CREATE TABLE IF NOT EXISTS strata_asset_chunks (
            asset INTEGER NOT NULL,
            chunk INTEGER NOT NULL,
            size INTEGER NOT NULL,
            encoding INTEGER NOT NULL,
            crc32 INTEGER NOT NULL,
            data BLOB NOT NULL,
            PRIMARY KEY (asset, chunk)
        ) STRICT;
        CREATE TABLE IF NOT EXISTS strata_asset_references (
            asset TEXT NOT NULL,
            ownerTable TEXT NOT NULL,
            ownerKey TEXT NOT NULL,
            name TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (ownerTable, ownerKey, name)
        ) STRICT, WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS strata_asset_references_by_asset ON strata_asset_references (asset);
        CREATE INDEX IF NOT EXISTS strata_assets_unreferenced ON strata_assets (referenceCount) WHERE referenceCount = 0;
        CREATE TRIGGER IF NOT EXISTS strata_asset_references_insert
        AFTER INSERT ON strata_asset_references
        BEGIN
            SELECT RAISE(ABORT, 'strata_assets: reference to an unknown asset')
            WHERE NOT EXISTS (SELECT 1 FROM strata_assets WHERE sha256 = NEW.asset);
            UPDATE strata_assets SET referenceCount = referenceCount + 1 WHERE sha256 = NEW.asset;
        END;
        CREATE TRIGGER IF NOT EXISTS strata_asset_references_update
        AFTER UPDATE OF asset ON strata_asset_references
        WHEN OLD.asset IS NOT NEW.asset
        BEGIN
            SELECT RAISE(ABORT, 'strata_assets: reference to an unknown asset')
            WHERE NOT EXISTS (SELECT 1 FROM strata_assets WHERE sha256 = NEW.asset);
            UPDATE strata_assets SET referenceCount = referenceCount + 1 WHERE sha256 = NEW.asset;
            UPDATE strata_assets SET referenceCount = referenceCount - 1 WHERE sha256 = OLD.asset;
            DELETE FROM strata_assets WHERE sha256 = OLD.asset AND referenceCount <= 0;
        END;
        CREATE TRIGGER IF NOT EXISTS strata_asset_references_delete
        AFTER DELETE ON strata_asset_references
        BEGIN
            UPDATE strata_assets SET referenceCount = referenceCount - 1 WHERE sha256 = OLD.asset;
            DELETE FROM strata_assets WHERE sha256 = OLD.asset AND referenceCount <= 0;
        END;
        CREATE TRIGGER IF NOT EXISTS strata_assets_delete
        AFTER DELETE ON strata_assets
        BEGIN
            DELETE FROM strata_asset_chunks WHERE asset = OLD.id;
        END;
        """
}
