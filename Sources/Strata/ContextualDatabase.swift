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
