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

extension SyncEngine {
    /// An engine suited to the current dependency context:
    /// - **live**: syncs with `container`, which is required (``SyncEngineError/noContainer``
    ///   otherwise), on the default schedule;
    /// - **preview**: with no container, a fresh ``MockCloud``, synced every second on the
    ///   `continuousClock` dependency;
    /// - **test**: with no container, a fresh ``MockCloud`` and nothing automatic: the test
    ///   drives ``sendChanges()``, ``fetchChanges()`` and ``syncChanges()``.
    ///
    /// `logger` receives the engine's events; a command-line program that prints its own
    /// output may want it at `.warning` or above. `encryption` says how the engine seals what
    /// it sends (end to end by default; see `Documentation/Encryption.md`).
    public static func contextual(
        for database: any DatabaseWriter,
        tables: [any TableRecord.Type],
        container: (any CloudContainer)? = nil,
        user: String = "preview-user",
        encryption: SyncEncryption = .endToEnd,
        logger: Logger = Logger(label: "strata.sync")
    ) throws -> SyncEngine {
        @Dependency(\.context) var context
        @Dependency(\.continuousClock) var clock
        let names = tables.map { $0.tableName }
        switch context {
        case .live:
            guard let container else { throw SyncEngineError.noContainer }
            return try SyncEngine(
                for: database, tableNames: names, container: container, configuration: SyncEngineConfiguration(encryption: encryption),
                logger: logger)
        case .preview:
            let schedule = SyncSchedule(clock: clock, sendDelay: .seconds(1), pollInterval: .seconds(1))
            return try SyncEngine(
                for: database, tableNames: names, container: container ?? MockCloud().container(user: user),
                configuration: SyncEngineConfiguration(schedule: schedule, sendsBeforeSharing: true, encryption: encryption),
                logger: logger)
        case .test:
            return try SyncEngine(
                for: database, tableNames: names, container: container ?? MockCloud().container(user: user),
                configuration: SyncEngineConfiguration(schedule: nil, encryption: encryption), logger: logger, startImmediately: false)
        }
    }
}
