import Dependencies
import IssueReporting
import StrataSQLite

extension DependencyValues {
    /// The database features read and write: a `DatabasePool` or
    /// `DatabaseQueue` set once, when the app starts.
    ///
    /// ```swift
    /// extension DependencyValues {
    ///     mutating func bootstrapDatabase() throws {
    ///         defaultDatabase = try appDatabase()
    ///     }
    /// }
    /// // The app's entry point:
    /// prepareDependencies { try $0.bootstrapDatabase() }
    /// // A feature:
    /// @Dependency(\.defaultDatabase) var database
    /// ```
    ///
    /// Reading it before anything set it is a programmer error, but not a fatal one: an issue is
    /// reported (through IssueReporting: a test failure in tests, a runtime warning elsewhere)
    /// that says how to set it in the current context, and the reader gets a blank in-memory
    /// database so the program keeps running.
    public var defaultDatabase: any DatabaseWriter {
        get { self[DefaultDatabaseKey.self] }
        set { self[DefaultDatabaseKey.self] = newValue }
    }
}

/// The key of `DependencyValues.defaultDatabase`. Every context's default is the
/// same stand-in; only the advice in the reported issue differs.
enum DefaultDatabaseKey: DependencyKey {
    static var liveValue: any DatabaseWriter { unsetDatabase(context: .live) }
    static var previewValue: any DatabaseWriter { unsetDatabase(context: .preview) }
    static var testValue: any DatabaseWriter { unsetDatabase(context: .test) }

    /// swift-dependencies calls this once per context (and per test), then caches the result, so
    /// the issue is reported once rather than on every read.
    private static func unsetDatabase(context: DependencyContext) -> any DatabaseWriter {
        reportIssue(UnsetDefaultDatabase.message(for: context))
        do {
            return try DatabaseQueue()
        } catch {
            // Opening a private in-memory database only fails when SQLite cannot allocate
            // memory; there is no database to fall back to then.
            fatalError("Strata could not open an in-memory database to stand in for the unset default database: \(error)")
        }
    }
}

/// The text of the issue reported when `DependencyValues.defaultDatabase` is read
/// before it is set.
enum UnsetDefaultDatabase {
    static let headline = "@Dependency(\\.defaultDatabase) was read before a database was set."

    static func message(for context: DependencyContext) -> String {
        let advice: String
        switch context {
        case .live:
            advice = """
                Set it once, as early as possible in the app's entry point:

                    prepareDependencies { try $0.bootstrapDatabase() }

                where bootstrapDatabase() opens the database with defaultDatabase(path:configuration:) \
                and migrates it.
                """
        case .preview:
            advice = """
                Set it in the preview before building the view or model:

                    let _ = prepareDependencies { try $0.bootstrapDatabase() }

                In a preview, defaultDatabase(path:configuration:) opens a named in-memory \
                database; seed it with db.seed { ... }.
                """
        case .test:
            advice = """
                Give the test or suite its own database with the dependencies trait:

                    @Suite(.dependencies { try $0.bootstrapDatabase() })

                or set it with withDependencies { $0.defaultDatabase = ... }. In tests, \
                defaultDatabase(path:configuration:) opens an in-memory database unique to the test.
                """
        }
        return headline + "\n\n" + advice + "\n\nA blank in-memory database is used instead; nothing written to it is kept."
    }
}
