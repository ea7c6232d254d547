import Dependencies
import IssueReporting
import Logging
import StrataSQLite
import StrataSync

extension DependencyValues {
    /// The sync engine of ``defaultDatabase``, set once when the app starts, beside it:
    ///
    /// ```swift
    /// prepareDependencies {
    ///     $0.defaultDatabase = try appDatabase()
    ///     $0.defaultSyncEngine = try SyncEngine.contextual(
    ///         for: $0.defaultDatabase, tables: [Game.self, Player.self])
    /// }
    /// ```
    ///
    /// Reading it before it was set reports an issue and returns an engine over a blank
    /// in-memory database and a mock cloud, so the program keeps running.
    public var defaultSyncEngine: SyncEngine {
        get { self[DefaultSyncEngineKey.self] }
        set { self[DefaultSyncEngineKey.self] = newValue }
    }
}

enum DefaultSyncEngineKey: DependencyKey {
    static var liveValue: SyncEngine { unsetEngine() }
    static var previewValue: SyncEngine { unsetEngine() }
    static var testValue: SyncEngine { unsetEngine() }

    private static func unsetEngine() -> SyncEngine {
        reportIssue(
            """
            @Dependency(\\.defaultSyncEngine) was read before an engine was set. Set it beside the \
            database: $0.defaultSyncEngine = try SyncEngine.contextual(for: $0.defaultDatabase, tables: [...]).
            """)
        do {
            return try SyncEngine(
                for: DatabaseQueue(), tableNames: [], container: MockCloud().container(user: "unset"),
                configuration: SyncEngineConfiguration(schedule: nil), startImmediately: false)
        } catch {
            fatalError("Strata could not open an in-memory database to stand in for the unset sync engine: \(error)")
        }
    }
}
