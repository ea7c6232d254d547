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
/// in the user's file (`ChangeLog`) and drained here in a later transaction, and a fetched
/// page's change token is saved after the page is applied, in its own transaction; applying
/// a page twice changes nothing. See `Documentation/Sync.md`, "After a crash".
public enum Metadatabase {
    /// The schema name the metadatabase is attached under.
    public static let schemaName = "strata_sync"

    /// The container identifier used when none is given.
    public static let defaultContainerIdentifier = "iCloud.strata.default"

    /// The page size of a new metadatabase, in bytes; SQLite's default is 4,096.
    ///
    /// Its rows are large (a record's last known server copy and its field versions, about
    /// 2 KB with a 36-character device id), and sending or receiving a record writes its row
    /// whole, once or twice: SQLite's work on those writes is most of the engine's. With
    /// 16 KB pages, the same 100,000 rows written as a first sync writes them (inserted, then
    /// updated with the cloud's answers, in batches of 400) took about 21 % less time (Python's
    /// `sqlite3` on this SQLite: inserts 0.86 → 0.68 s, answers 1.39 → 1.10 s); the file is
    /// the same size. A metadatabase made by an earlier version keeps its 4,096 bytes.
    static let pageSize = 16_384

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

    /// The file attached as the metadatabase, or a description of an in-memory one.
    static func attachedFile(of db: Database) throws -> String {
        let file = try String.fetchOne(db, sql: "SELECT file FROM pragma_database_list WHERE name = ?", arguments: [schemaName])
        return file.flatMap { $0.isEmpty ? nil : $0 } ?? "an in-memory database"
    }

    /// Attaches the metadatabase of `containerIdentifier` to `db` unless it is attached
    /// already, and creates its tables on connections that write.
    ///
    /// - Throws: ``SyncEngineError/metadatabaseMismatch(attached:expected:)`` when `db` already
    ///   has the metadatabase of another container attached (a `prepareDatabase` that attached
    ///   it with another identifier than the engine's container): continuing would sync from an
    ///   empty or foreign metadatabase and upload everything again.
    static func attach(to db: Database, containerIdentifier: String) throws {
        let expected = location(for: db.location, containerIdentifier: containerIdentifier)
        if try isAttached(to: db) {
            let attachedIdentifier = try? EngineState.value(EngineState.containerIdentifier, in: db)
            let attachedFile = try attachedFile(of: db)
            let mismatched =
                if let attachedIdentifier {
                    attachedIdentifier != containerIdentifier
                } else if let expectedPath = expected.path {
                    canonicalPath(attachedFile) != canonicalPath(expectedPath)
                } else {
                    false
                }
            if mismatched {
                throw SyncEngineError.metadatabaseMismatch(
                    attached: attachedFile, expected: expected.path ?? "an in-memory database")
            }
        } else {
            try db.attach(expected, as: schemaName, pageSizeIfNew: pageSize)
        }
        if db.role.canWrite && !db.isReadOnly {
            try MetadatabaseTable.createAll(in: db)
            if try EngineState.value(EngineState.containerIdentifier, in: db) == nil {
                try EngineState.set(EngineState.containerIdentifier, to: containerIdentifier, in: db)
            }
        }
    }

    private static func canonicalPath(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    /// The container whose metadatabase `db` uses: the one the sync engine recorded in the
    /// user's file, or ``defaultContainerIdentifier`` before any engine ran on it.
    static func recordedContainerIdentifier(in db: Database) throws -> String {
        try SyncedFileIdentity.value(SyncedFileIdentity.containerIdentifierKey, in: db) ?? defaultContainerIdentifier
    }
}

extension Database {
    /// Attaches the sync metadatabase, so ``SyncMetadata`` can be queried and joined with the
    /// user's tables. Call it in `Configuration.prepareDatabase` to make it available on every
    /// connection of a pool; the sync engine attaches it to the writer itself.
    ///
    /// - Parameter containerIdentifier: the cloud container the engine syncs with. When nil,
    ///   the container the engine recorded in this database file the last time it ran, so
    ///   adding this call to an app that already syncs attaches the metadatabase it already
    ///   has. Pass the identifier when the app may create its database and attach before the
    ///   engine first runs: an engine whose container differs from the attached metadatabase's
    ///   refuses to start with ``SyncEngineError/metadatabaseMismatch(attached:expected:)``
    ///   naming both files, rather than sync from the wrong one.
    public func attachMetadatabase(containerIdentifier: String? = nil) throws {
        let identifier = try containerIdentifier ?? Metadatabase.recordedContainerIdentifier(in: self)
        try Metadatabase.attach(to: self, containerIdentifier: identifier)
    }
}
