import Foundation
import Strata

/// Opens Scorekeeper's database for the current context and migrates it.
///
/// - live: the file at `path`, or `scorekeeper/db.sqlite` under the user's data directory;
/// - preview: a named in-memory database, seeded with ``SampleData``;
/// - test: an in-memory database of the test's own, empty.
public func appDatabase(path: String? = nil) throws -> any DatabaseWriter {
    @Dependency(\.context) var context
    var configuration = Configuration()
    configuration.label = "scorekeeper"
    let database = try Strata.defaultDatabase(path: path, configuration: configuration)
    try Schema.migrator(erasingOnSchemaChange: context != .live).migrate(database)
    if context == .preview {
        _ = try database.write { db in try SampleData.seed(db) }
    }
    return database
}

extension DependencyValues {
    /// Sets ``Dependencies/DependencyValues/defaultDatabase`` to Scorekeeper's database: call it
    /// once, from `prepareDependencies` in the program and from the `.dependencies` trait in
    /// tests.
    public mutating func bootstrapDatabase(path: String? = nil) throws {
        // `appDatabase` and the seed read `@Dependency(\.context)`, `\.uuid` and `\.date`.
        // Those reads see the task's current values, not `self`: a caller that sets
        // `$0.context = .preview` in the same closure before calling this would otherwise be
        // ignored. Making `self` current for the call fixes that.
        let values = self
        defaultDatabase = try withDependencies {
            $0 = values
        } operation: {
            try appDatabase(path: path)
        }
    }
}
