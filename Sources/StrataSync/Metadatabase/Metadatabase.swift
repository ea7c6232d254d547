import Foundation
import StrataSQLite

/// The sync engine's own database: per-record metadata, table schemas, engine state and change
/// tokens, and records waiting for a parent or for a table this version does not know.
///
/// It lives beside the user's database (`.NAME.metadata-CONTAINER.sqlite` next to the file; an
/// in-memory database next to an in-memory one) and is attached to the user's connections as
/// the schema ``schemaName``, so the engine updates it in the same transactions as the rows.
///
/// SQLite makes a transaction that spans several WAL files atomic in each file, not across
/// them. The engine never relies on both files committing together: local changes are logged
/// in the user's file (``ChangeLog``) and drained here in a later transaction, and a fetched
/// page's change token is saved after the page is applied, in its own transaction; applying
/// a page twice changes nothing. See `Documentation/Sync.md`, "After a crash".
public enum Metadatabase {
    /// The schema name the metadatabase is attached under.
    public static let schemaName = "strata_sync"

    /// The container identifier used when none is given.
    public static let defaultContainerIdentifier = "iCloud.strata.default"

    /// Where the metadatabase of a database at `location` lives, for one cloud container.
    public static func location(for location: DatabaseLocation, containerIdentifier: String) -> DatabaseLocation {
        switch location {
        case .file(let path):
            let base = ((path as NSString).lastPathComponent as NSString).deletingPathExtension
            return location.sibling(named: ".\(base).metadata-\(containerIdentifier).sqlite")
        case .namedMemory:
            return location.sibling(named: "metadata-\(containerIdentifier)")
        case .privateMemory:
            return .privateMemory
        }
    }

    /// Whether `db` has the metadatabase attached.
    static func isAttached(to db: Database) throws -> Bool {
        try db.schemaNames().contains(schemaName)
    }

    /// Attaches the metadatabase to `db` unless it is attached already, and creates its tables
    /// on connections that write.
    static func attach(to db: Database, containerIdentifier: String) throws {
        if try !isAttached(to: db) {
            try db.attach(location(for: db.location, containerIdentifier: containerIdentifier), as: schemaName)
        }
        if db.role.canWrite && !db.isReadOnly {
            try db.execute(sql: MetadatabaseSchema.createSQL)
        }
    }
}

extension Database {
    /// Attaches the sync metadatabase, so ``SyncMetadata`` can be queried and joined with the
    /// user's tables. Call it in `Configuration.prepareDatabase` to make it available on every
    /// connection of a pool; the sync engine attaches it to the writer itself.
    ///
    /// - Parameter containerIdentifier: the cloud container the engine syncs with.
    public func attachMetadatabase(containerIdentifier: String = Metadatabase.defaultContainerIdentifier) throws {
        try Metadatabase.attach(to: self, containerIdentifier: containerIdentifier)
    }
}
