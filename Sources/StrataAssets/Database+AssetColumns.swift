import Foundation
import StrataSQLite

extension Database {
    /// Makes a table's column hold asset references that the store counts by itself.
    ///
    /// The column stores an ``AssetID`` (TEXT). Triggers on the table keep one reference per
    /// row, owned by `AssetOwner(table: table, key: <the row's key as text>, name: column)`:
    /// - inserting a row with a non-NULL value adds the reference;
    /// - updating the value (or the key) moves it, releasing the old asset;
    /// - deleting the row, by any means (a `DELETE`, or a foreign key `ON DELETE CASCADE` from a
    ///   parent table), releases it, and the asset goes with its last reference.
    ///
    /// Call it once, in a migration after the table's creation:
    ///
    /// ```swift
    /// AssetSchema.registerMigration(in: &migrator)
    /// migrator.registerMigration("players") { db in
    ///     try db.execute(sql: """
    ///         CREATE TABLE players (
    ///             id INTEGER PRIMARY KEY,
    ///             gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
    ///             avatar TEXT)
    ///         """)
    ///     try db.trackAssetColumn(table: "players", column: "avatar")
    /// }
    /// ```
    ///
    /// Inserting a row whose column names an asset that is not stored fails (the store's
    /// trigger aborts the statement), so a row never refers to missing content.
    /// Rows replaced by `INSERT OR REPLACE` are only released when `PRAGMA recursive_triggers`
    /// is on, as SQLite fires no delete trigger for them otherwise; prefer an upsert.
    ///
    /// - Parameters:
    ///   - keyColumn: the column that identifies a row; `id` by default (`rowid` works for
    ///     tables that have one).
    public func trackAssetColumn(table: String, column: String, keyColumn: String = "id") throws {
        if try !AssetSchema.exists(self) {
            try AssetSchema.createTables(self)
        }
        let t = table.quotedIdentifier
        let c = column.quotedIdentifier
        let k = keyColumn.quotedIdentifier
        let tableLiteral = table.quotedSQLLiteral
        let nameLiteral = column.quotedSQLLiteral
        let prefix = "strata_asset_\(table)_\(column)"
        let ownerOld = "ownerTable = \(tableLiteral) AND ownerKey = CAST(OLD.\(k) AS TEXT) AND name = \(nameLiteral)"
        try execute(
            sql: """
                CREATE TRIGGER IF NOT EXISTS \((prefix + "_insert").quotedIdentifier)
                AFTER INSERT ON \(t) WHEN NEW.\(c) IS NOT NULL
                BEGIN
                    INSERT INTO strata_asset_references (asset, ownerTable, ownerKey, name)
                    VALUES (NEW.\(c), \(tableLiteral), CAST(NEW.\(k) AS TEXT), \(nameLiteral))
                    ON CONFLICT (ownerTable, ownerKey, name) DO UPDATE SET asset = excluded.asset;
                END;
                CREATE TRIGGER IF NOT EXISTS \((prefix + "_update").quotedIdentifier)
                AFTER UPDATE OF \(c), \(k) ON \(t)
                WHEN OLD.\(c) IS NOT NEW.\(c) OR OLD.\(k) IS NOT NEW.\(k)
                BEGIN
                    DELETE FROM strata_asset_references WHERE NEW.\(c) IS NULL AND \(ownerOld);
                    UPDATE strata_asset_references SET asset = NEW.\(c), ownerKey = CAST(NEW.\(k) AS TEXT)
                    WHERE NEW.\(c) IS NOT NULL AND \(ownerOld);
                    INSERT INTO strata_asset_references (asset, ownerTable, ownerKey, name)
                    SELECT NEW.\(c), \(tableLiteral), CAST(NEW.\(k) AS TEXT), \(nameLiteral)
                    WHERE OLD.\(c) IS NULL AND NEW.\(c) IS NOT NULL
                    ON CONFLICT (ownerTable, ownerKey, name) DO UPDATE SET asset = excluded.asset;
                END;
                CREATE TRIGGER IF NOT EXISTS \((prefix + "_delete").quotedIdentifier)
                AFTER DELETE ON \(t) WHEN OLD.\(c) IS NOT NULL
                BEGIN
                    DELETE FROM strata_asset_references WHERE \(ownerOld);
                END;
                """)
    }

    /// Drops the triggers ``trackAssetColumn(table:column:keyColumn:)`` created. Existing
    /// references stay until removed.
    public func untrackAssetColumn(table: String, column: String) throws {
        let prefix = "strata_asset_\(table)_\(column)"
        for suffix in ["_insert", "_update", "_delete"] {
            try execute(sql: "DROP TRIGGER IF EXISTS \((prefix + suffix).quotedIdentifier)")
        }
    }
}
