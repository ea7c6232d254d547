import Dependencies
import Foundation
import IssueReporting
import StrataSQLite

/// Opens the database that suits the current dependency context, for
/// `DependencyValues.defaultDatabase`.
///
/// | Context   | Database |
/// |-----------|----------|
/// | `.live`   | A `DatabasePool` on disk at `path`, or by default at `<data directory>/<program name>/db.sqlite` (``DefaultDatabaseLocation``). Missing folders are created. |
/// | `.preview`| An in-memory pool named after `path` (`DatabasePool(named:)`): a preview that runs its setup again gets the same database back while the first pool is alive, which is why seeds should be re-runnable (`Database.seed(_:)`). |
/// | `.test`   | An in-memory pool with a name no other call uses, so tests running in parallel never share data. |
///
/// ```swift
/// func appDatabase() throws -> any DatabaseWriter {
///     var configuration = Configuration()
///     configuration.prepareDatabase { db in /* functions, temporary views */ }
///     let database = try defaultDatabase(configuration: configuration)
///     try migrator.migrate(database)
///     return database
/// }
/// ```
///
/// Opening the same live file a second time in one process while the first pool is alive is a
/// programmer error (two writers on one file, each blind to the other's commits): an issue is
/// reported and the pool already open is returned instead of a second one.
///
/// Every connection that writes gets the sync engine's capture functions
/// (`Database.addSyncCaptureFunctions()`), so its writes to synced tables are captured in any
/// process. Every connection gets a `uuid()` SQL function (unless the configuration defines one), drawing
/// lowercase UUIDs from the `uuid` dependency: `"id" TEXT PRIMARY KEY NOT NULL DEFAULT (uuid())`
/// works as SQLiteData's users write it.
///
/// Inside an extension of `DependencyValues`, the property `DependencyValues.defaultDatabase`
/// hides this function: call it as `Strata.defaultDatabase(...)` there.
///
/// - Throws: ``DefaultDatabaseError`` when the live folder cannot be created, and the
///   `DatabaseError` of opening the database.
public func defaultDatabase(
    path: String? = nil,
    configuration: Configuration = Configuration()
) throws -> any DatabaseWriter {
    @Dependency(\.context) var context
    var configuration = configuration
    // `DEFAULT (uuid())` on a key column is how SQLiteData's users declare tables; SQLite has
    // no such function. This one draws from the `uuid` dependency, so tests and previews that
    // make it incrementing get the same ids every run. An app's own `uuid()` wins. The
    // dependency is read when the function runs (a test that never calls it need not set it),
    // from the values current now: connections run on threads of their own.
    let dependencies = DependencyValues._current
    // The sync engine's capture triggers live in the file and fire for every connection that
    // writes it, this process's or another's (a tool, an extension): each needs their functions.
    configuration.prepareDatabase { db in
        if db.role.canWrite { try db.addSyncCaptureFunctions() }
    }
    configuration.prepareDatabase { db in
        let defined =
            try Bool.fetchOne(
                db, sql: "SELECT count(*) > 0 FROM pragma_function_list WHERE name = 'uuid' AND narg IN (0, -1)") ?? false
        guard !defined else { return }
        try db.add(function: DatabaseFunction("uuid", argumentCount: 0) { _ in dependencies.uuid() })
    }
    switch context {
    case .live:
        let location = try path.map(DefaultDatabaseLocation.init(path:)) ?? DefaultDatabaseLocation.standard()
        try location.createParentDirectory()
        return try LiveDatabaseRegistry.shared.open(path: location.path) {
            try DatabasePool(path: location.path, configuration: configuration)
        }
    case .preview:
        return try DatabasePool(named: "preview-" + (path ?? "default"), configuration: configuration)
    case .test:
        // Not `\.uuid`: tests usually make it an incrementing generator, and two tests running
        // in parallel would then both get the name of UUID 0.
        return try DatabasePool(named: "test-" + UUID().uuidString, configuration: configuration)
    }
}
