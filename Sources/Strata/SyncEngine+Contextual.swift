import Dependencies
import Logging
import StrataSQLite
import StrataSync

extension SyncEngine {
    /// Creates an engine suited to the current dependency context, the way SQLiteData's
    /// `SyncEngine(for:tables:)` reads in an app's bootstrap:
    ///
    /// ```swift
    /// prepareDependencies {
    ///     $0.defaultDatabase = try appDatabase()
    ///     $0.defaultSyncEngine = try SyncEngine(for: $0.defaultDatabase, tables: Game.self, Player.self)
    /// }
    /// ```
    ///
    /// What is left out, the context decides:
    /// - **live**: a container is required: ``SyncEngineError/noContainer`` when none is given
    ///   (a live cloud needs networking, which only the apps that sync live build); the default
    ///   schedule.
    /// - **preview**: a fresh ``MockCloud`` (under ``Metadatabase/defaultContainerIdentifier``,
    ///   which `db.attachMetadatabase()` uses too) as `"preview-user"`, synced every second on the
    ///   `continuousClock` dependency; `share(record:)` sends an unsent record first.
    /// - **test**: a fresh ``MockCloud`` as `"preview-user"` and nothing automatic: the test
    ///   drives ``SyncEngine/sendChanges()``, ``SyncEngine/fetchChanges()`` and
    ///   ``SyncEngine/syncChanges()``. Each engine gets its own cloud, so tests stay isolated.
    ///
    /// What is given always wins: a `container` is used in every context, and a
    /// `configuration` replaces the context's schedule entirely. Passing a container picks
    /// StrataSync's designated form of this initializer, whose configuration defaults to the
    /// live one: pass `configuration:` too in a test that brings its own cloud.
    ///
    /// - Parameters:
    ///   - tables: the synced tables.
    ///   - privateTables: synced tables whose rows are never shared.
    ///   - container: the cloud; omitted, the context decides (above).
    ///   - configuration: identity, schedule and encryption; omitted, the context decides.
    ///   - mergePolicies: columns merged otherwise than by the last writer (counters, the
    ///     app's own rule), added to the configuration's, whichever it is.
    ///   - delegate: decides what account changes do to local data; nil deletes it.
    ///   - startImmediately: whether the engine starts now. A started engine shares and accepts
    ///   shares; it sends and fetches by itself only on a schedule, which the test context has
    ///   not.
    /// - Throws: ``SyncEngineError/noContainer`` in the live context without a container;
    ///   ``SyncSchemaError`` when a table breaks a rule of sync; database errors.
    public convenience init(
        for database: any DatabaseWriter,
        tables: any TableRecord.Type...,
        privateTables: any TableRecord.Type...,
        container: (any CloudContainer)? = nil,
        configuration: SyncEngineConfiguration? = nil,
        mergePolicies: [MergePolicy] = [],
        delegate: (any SyncEngineDelegate)? = nil,
        logger: Logger = Logger(label: "strata.sync"),
        startImmediately: Bool = true
    ) throws {
        var setting = try ContextualEngineSetting(container: container, configuration: configuration, user: "preview-user")
        setting.configuration.mergePolicies += mergePolicies
        try self.init(
            for: database, tableNames: (tables + privateTables).map { $0.tableName },
            privateTableNames: privateTables.map { $0.tableName }, container: setting.container,
            configuration: setting.configuration, delegate: delegate, logger: logger,
            startImmediately: startImmediately)
    }

    /// An engine suited to the current dependency context: the same rules as
    /// ``SyncEngine/init(for:tables:privateTables:container:configuration:delegate:logger:startImmediately:)``,
    /// with the tables as arrays, the mock cloud's user named, `encryption` applied to the
    /// context's configuration when no `configuration` is given, and `mergePolicies` added.
    ///
    /// `logger` receives the engine's events; a command-line program that prints its own
    /// output may want it at `.warning` or above.
    public static func contextual(
        for database: any DatabaseWriter,
        tables: [any TableRecord.Type],
        privateTables: [any TableRecord.Type] = [],
        container: (any CloudContainer)? = nil,
        user: String = "preview-user",
        configuration: SyncEngineConfiguration? = nil,
        encryption: SyncEncryption = .endToEnd,
        mergePolicies: [MergePolicy] = [],
        delegate: (any SyncEngineDelegate)? = nil,
        logger: Logger = Logger(label: "strata.sync"),
        startImmediately: Bool = true
    ) throws -> SyncEngine {
        var setting = try ContextualEngineSetting(container: container, configuration: configuration, user: user)
        if configuration == nil { setting.configuration.encryption = encryption }
        setting.configuration.mergePolicies += mergePolicies
        return try SyncEngine(
            for: database, tableNames: (tables + privateTables).map { $0.tableName },
            privateTableNames: privateTables.map { $0.tableName }, container: setting.container,
            configuration: setting.configuration, delegate: delegate, logger: logger,
            startImmediately: startImmediately)
    }
}

/// The cloud and configuration the dependency context gives an engine, where the caller gave
/// none.
struct ContextualEngineSetting {
    /// A fresh mock cloud under the default container identifier: the one
    /// `db.attachMetadatabase()` uses before any engine ran, so a bootstrap that attaches the
    /// metadatabase in `prepareDatabase` (as SQLiteData's users do) matches the engine's.
    static func contextualCloud() -> MockCloud {
        MockCloud(identifier: Metadatabase.defaultContainerIdentifier)
    }

    var container: any CloudContainer
    var configuration: SyncEngineConfiguration

    init(container: (any CloudContainer)?, configuration: SyncEngineConfiguration?, user: String) throws {
        @Dependency(\.context) var context
        @Dependency(\.continuousClock) var clock
        switch context {
        case .live:
            guard let container else { throw SyncEngineError.noContainer }
            self.container = container
            self.configuration = configuration ?? SyncEngineConfiguration()
        case .preview:
            self.container = container ?? Self.contextualCloud().container(user: user)
            self.configuration =
                configuration
                ?? SyncEngineConfiguration(
                    schedule: SyncSchedule(clock: clock, sendDelay: .seconds(1), pollInterval: .seconds(1)), sendsBeforeSharing: true)
        case .test:
            self.container = container ?? Self.contextualCloud().container(user: user)
            self.configuration = configuration ?? SyncEngineConfiguration(schedule: nil)
        }
    }
}
