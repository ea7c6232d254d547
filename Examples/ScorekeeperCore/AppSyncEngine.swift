import Logging
import Strata

/// Scorekeeper's sync engine for the current context: in preview, its games and players sync
/// through an in-memory mock cloud (``previewSyncSummary()`` shows it); live, through
/// `container` (the `strata-cloud` service, with `--cloud`).
///
/// `keys` is the file this device keeps its encryption keys in (by default a file beside the
/// database); processes given one file share keys, as devices whose keychain syncs do.
public func appSyncEngine(
    for database: any DatabaseWriter, container: (any CloudContainer)? = nil, keys: String? = nil
) throws
    -> SyncEngine
{
    // Warnings and errors only: the commands print their own output, and the engine's
    // per-sync event tables would drown it.
    var logger = Logger(label: "scorekeeper.sync")
    logger.logLevel = .warning
    return try SyncEngine.contextual(
        for: database, tables: [Game.self, Player.self], container: container,
        encryption: .endToEnd(keys: keys.map { KeyStorage.file(atPath: $0) }), mergePolicies: Schema.mergePolicies, logger: logger)
}

extension DependencyValues {
    /// Sets ``Dependencies/DependencyValues/defaultSyncEngine`` over ``defaultDatabase``: call
    /// it after ``bootstrapDatabase(path:)``; live, give the cloud's `container`.
    public mutating func bootstrapSyncEngine(container: (any CloudContainer)? = nil, keys: String? = nil) throws {
        let values = self
        defaultSyncEngine = try withDependencies {
            $0 = values
        } operation: {
            try appSyncEngine(for: values.defaultDatabase, container: container, keys: keys)
        }
    }
}

extension Scorekeeper {
    /// Syncs once with the preview cloud and says what it holds, from the engine's
    /// `SyncMetadata`: what a preview run would have sent to another device.
    public func previewSyncSummary() async throws -> String {
        @Dependency(\.defaultSyncEngine) var engine
        try await engine.syncChanges()
        // On the writer: the engine attached the metadatabase there (readers of a pool need
        // `db.attachMetadatabase()` in their `prepareDatabase`).
        let (syncedTypes, pending) = try await engine.database.write { db in
            let synced = try SyncMetadata.where { $0.pendingOperation == nil }.select(\.recordType).fetchAll(db)
            let pending = try SyncMetadata.where { $0.pendingOperation != nil }.fetchCount(db)
            return (synced, pending)
        }
        let counts = Dictionary(grouping: syncedTypes, by: { $0 }).sorted { $0.key < $1.key }
            .map { "\($0.value.count) \($0.key)" }.joined(separator: ", ")
        return "Preview sync: \(counts.isEmpty ? "nothing" : counts) in the in-memory cloud, \(pending) pending."
    }
}
