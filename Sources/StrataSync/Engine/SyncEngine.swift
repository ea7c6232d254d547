import Foundation
import Logging
import Observation
import StrataQueries
import StrataSQLite
import Synchronization

/// Syncs a database's tables with a cloud, record by record, merging concurrent edits per
/// field.
///
/// ```swift
/// let engine = try SyncEngine(for: database, tables: Game.self, Player.self, container: container)
/// try await engine.syncChanges()
/// ```
///
/// Creating the engine validates the synced tables (``SyncSchemaError`` names the table and
/// column that break a rule), attaches the metadatabase to the writer and installs change
/// capture there. From then on every committed change to a synced table is logged in the same
/// transaction and sent by ``sendChanges()``; ``fetchChanges()`` merges what other devices
/// sent. One send and one fetch run at a time. See `Documentation/Sync.md`.
public final class SyncEngine: Sendable, Observable {
    /// The synced database.
    public let database: any DatabaseWriter
    /// The cloud the engine syncs with, as given. The engine calls it outside its mark
    /// (``isSynchronizing`` is false in its methods), so a row a container of the app's own
    /// writes to a synced table is captured and sent.
    public let container: any CloudContainer
    /// The synced tables, validated, parents first.
    public let schema: SyncSchema
    /// This device's id: the last component of every version it issues.
    public let deviceID: String
    /// Issues the versions of local edits.
    public let clock: HybridLogicalClock
    /// Where the engine logs each event and failure.
    public let logger: Logger
    /// Decides what account changes do to local data; nil deletes it.
    public let delegate: (any SyncEngineDelegate)?
    /// The synced tables whose rows are never shared.
    public let privateTableNames: Set<String>
    /// The cloud as the engine speaks to it: ``unmarkedContainer`` seen through end-to-end
    /// encryption (unless the configuration turned it off).
    let cloud: any CloudContainer
    /// ``container`` called outside the engine's mark, so that what an app's own container
    /// writes to a synced table is captured as the app's (``UnmarkedCloudContainer``). Every
    /// call the engine makes to the container goes through it.
    let unmarkedContainer: any CloudContainer
    /// The keys the engine seals and opens with; nil when encryption is off.
    let keyring: Keyring?
    let configuration: SyncEngineConfiguration
    let work = SerialWork()
    let signal = ScheduleSignal()
    let statusStorage = Mutex(SyncEngineStatus())
    let tasks = Mutex<[Task<Void, Never>]>([])
    let registrar = ObservationRegistrar()
    let statusSubscribers = Mutex(StatusSubscribers())
    /// Whether ``EngineState/resyncSending`` may be set: true until a send that left nothing
    /// pending cleared it, so the sends after that (every push) do not look again.
    let resyncSendingMayBeSet = Atomic<Bool>(true)

    /// Creates an engine syncing `tables` (and `privateTables`, which are never shared).
    ///
    /// - Throws: ``SyncSchemaError`` when a table breaks a rule of sync; database errors.
    public convenience init(
        for database: any DatabaseWriter,
        tables: any TableRecord.Type...,
        privateTables: any TableRecord.Type...,
        container: any CloudContainer,
        configuration: SyncEngineConfiguration = SyncEngineConfiguration(),
        delegate: (any SyncEngineDelegate)? = nil,
        logger: Logger = Logger(label: "strata.sync"),
        startImmediately: Bool = true
    ) throws {
        try self.init(
            for: database, tableNames: (tables + privateTables).map { $0.tableName },
            privateTableNames: privateTables.map { $0.tableName }, container: container,
            configuration: configuration, delegate: delegate, logger: logger, startImmediately: startImmediately)
    }

    /// Creates an engine syncing the tables with these names; those of `privateTableNames`
    /// (also listed in `tableNames`) are never shared.
    public init(
        for database: any DatabaseWriter,
        tableNames: [String],
        privateTableNames: [String] = [],
        container: any CloudContainer,
        configuration: SyncEngineConfiguration = SyncEngineConfiguration(),
        delegate: (any SyncEngineDelegate)? = nil,
        logger: Logger = Logger(label: "strata.sync"),
        startImmediately: Bool = true
    ) throws {
        self.database = database
        self.container = container
        self.delegate = delegate
        self.privateTableNames = Set(privateTableNames)
        self.configuration = configuration
        self.logger = logger
        let containerIdentifier = container.identifier
        // The engine's statements are marked from the first one on (``isSynchronizing``).
        let (deviceID, lastTimestamp) = try SynchronizationContext.$isSynchronizing.withValue(true) {
            try database.writeWithoutTransaction { db -> (String, HybridTimestamp?) in
                try Metadatabase.attach(to: db, containerIdentifier: containerIdentifier)
                if try SyncedFileIdentity.reconcile(in: db, containerIdentifier: containerIdentifier) {
                    logger.notice(
                        "the sync metadatabase described another copy of this database (erased, restored or replaced): reset; the next sync fetches everything and sends every local row"
                    )
                }
                let stored = try EngineState.value(EngineState.deviceID, in: db)
                let deviceID = configuration.deviceID ?? stored ?? UUID().uuidString.lowercased()
                if stored != deviceID { try EngineState.set(EngineState.deviceID, to: deviceID, in: db) }
                let last = try EngineState.value(EngineState.lastTimestamp, in: db).flatMap { HybridTimestamp($0) }
                return (deviceID, last)
            }
        }
        self.deviceID = deviceID
        let unmarkedContainer = UnmarkedCloudContainer(base: container)
        self.unmarkedContainer = unmarkedContainer
        switch configuration.encryption.mode {
        case .disabled:
            keyring = nil
            cloud = unmarkedContainer
        case .endToEnd(let keys, let passphrase):
            let location = database.location
            let storage: @Sendable (String) -> KeyStorage = { user in
                keys ?? Self.defaultKeyStorage(for: location, container: unmarkedContainer, user: user)
            }
            let keyring = Keyring(storage: storage, container: unmarkedContainer, recoveryPassphrase: passphrase, logger: logger)
            self.keyring = keyring
            cloud = EncryptedCloudContainer(base: unmarkedContainer, keyring: keyring)
        }
        clock = HybridLogicalClock(node: deviceID, physicalTime: configuration.physicalTime, restoring: lastTimestamp)
        let signal = self.signal
        let capture = ChangeCapture(tables: tableNames, clock: clock, onLoggedCommit: { signal.ring(.localChange) })
        schema = try SynchronizationContext.$isSynchronizing.withValue(true) {
            try database.writeWithoutTransaction { db in
                let schema = try capture.install(on: db)
                try ChangeLogDrain.reconcileMark(in: db)
                try db.transaction { try EngineState.forgetAmbiguousZoneKeys(in: db) }
                try PermissionTriggers.installIfNeeded(on: db, schema: schema)
                return schema
            }
        }
        try SynchronizationContext.$isSynchronizing.withValue(true) { try prepareSchemaChanges() }
        if let keyring {
            let database = self.database
            keyring.shareRoots.withLock { $0 = { zone in try await Self.shareRoots(in: zone, database: database) } }
        }
        if startImmediately { start() }
    }

    deinit {
        // Released without stop(): the schedule's tasks hold no reference to the engine, and
        // end here.
        for task in tasks.withLock({ $0 }) { task.cancel() }
        work.cancelAll()
        signal.finish()
        // Finished outside the lock: finishing runs each stream's onTermination.
        for continuation in statusSubscribers.withLock({ $0.removeAll() }) { continuation.finish() }
    }

    /// The engine's state; reading it inside observation tracking tracks it.
    public var status: SyncEngineStatus {
        registrar.access(self, keyPath: \.status)
        return statusStorage.withLock { $0 }
    }

    func updateStatus(_ change: (inout SyncEngineStatus) -> Void) {
        registrar.withMutation(of: self, keyPath: \.status) {
            statusStorage.withLock { status in
                change(&status)
                status.revision += 1
                // Under the status lock, so every stream receives the changes in their order.
                let current = status
                statusSubscribers.withLock { $0.yield(current) }
            }
        }
    }

    /// Whether the current task runs the engine's work: every statement the engine runs (its
    /// own reads and writes, the rows it applies, its metadata) sees it true, the app's own
    /// never do. A trace reads it to skip the engine's statements; SQL sees it as
    /// `strata_sync_is_synchronizing()`, and the query builder as ``$isSynchronizingChanges``.
    public static var isSynchronizing: Bool { SynchronizationContext.isSynchronizing }

    /// ``isSynchronizing`` as an SQL function, for triggers that must leave the engine's writes
    /// alone, through the query builder:
    ///
    /// ```swift
    /// Game.createTemporaryTrigger(after: .update, forEachRow: { new in … },
    ///     when: { _ in !SyncEngine.$isSynchronizingChanges() })
    /// ```
    ///
    /// The engine installs it on the writer; another connection adds it with
    /// `db.add(function: SyncEngine.$isSynchronizingChanges)`.
    @DatabaseFunction("strata_sync_is_synchronizing")
    public static func isSynchronizingChanges() -> Bool { isSynchronizing }

    /// Fetches, then sends: after it returns without error, this device has what the cloud
    /// had when it started, and the cloud has every change committed here before it started.
    public func syncChanges() async throws {
        try await fetchChanges()
        try await sendChanges()
    }

    /// How many local records wait to be sent: those a send left pending and those changed
    /// in the change log since, each record once however often it changed.
    public func pendingCount() async throws -> Int {
        try await markedAsEngine { try await pendingCountMarked() }
    }

    /// Runs `body` as the engine's own work: its statements see ``isSynchronizing`` true.
    /// Queued work (``SerialWork``) is marked already; public calls that run outside it use
    /// this.
    func markedAsEngine<T>(_ body: () async throws -> T) async rethrows -> T {
        try await SynchronizationContext.$isSynchronizing.withValue(true, operation: body)
    }

    private func pendingCountMarked() async throws -> Int {
        let schema = self.schema
        return try await database.write { db in
            try RecordMetadata.pendingCount(in: db) + ChangeLogDrain.undrainedRecordsNotPending(in: db, schema: schema)
        }
    }

    /// Deletes every synced row and all sync metadata on this device (the cloud keeps its
    /// copy): what happens by default when the user signs out.
    public func deleteLocalData() async throws {
        try await work.run { try await self.performDeleteLocalData() }
    }

    func performDeleteLocalData() async throws {
        let schema = self.schema
        try await ChangeCapture.withoutCapture {
            try await self.database.write { db in
                for table in schema.tables.reversed() {
                    try db.execute(sql: "DELETE FROM main.\(table.name.quotedIdentifier)")
                }
                let last = try ChangeLog.lastSequence(in: db)
                try ChangeLog.removeEntries(before: last, in: db)
                try EngineState.set(EngineState.drainedThrough, to: String(last), in: db)
                try MetadatabaseTable.forgetAccount(in: db)
            }
        }
        updateStatus {
            $0.pendingCount = 0; $0.quarantinedCount = 0
        }
    }

    /// Logs what a send or fetch did: the table of records when it is short (or at debug
    /// level), counts per action otherwise, so a first upload of a million rows does not log a
    /// million lines at info level.
    func logEvents(_ events: [SyncEvent], title: String) {
        guard !events.isEmpty else { return }
        if events.count <= 20 {
            logger.info("\(SyncEvent.table(events, title: title))")
        } else {
            let counts = Dictionary(grouping: events, by: \.action).map { "\($0.value.count) \($0.key.rawValue)" }.sorted()
            logger.info("\(title): \(counts.joined(separator: ", "))")
            logger.debug("\(SyncEvent.table(events, title: title))")
        }
    }

    func persistClock(in db: Database) throws {
        try EngineState.set(EngineState.lastTimestamp, to: clock.lastTimestamp.description, in: db)
        // For the other processes writing the file (see `CaptureSession`): what the engine
        // received or stamped itself. Not the clock's reading, which only moved past the log's
        // own versions on most sends: that rewrote the user's file in the drain's transaction,
        // one fsync more before a push's request (0.4 ms here; issue #27).
        let floor = clock.issuedOrReceived
        if floor > Int64.min { try CaptureClockFloor.raise(to: floor, in: db) }
    }

    /// Checks the merge policies; records the synced tables' columns; uploads the rows of tables new to the synced set,
    /// applies records kept for tables this version did not know, and fills in columns a
    /// migration added from the fields the cloud sent before.
    func prepareSchemaChanges() throws {
        try ColumnPolicies.validate(configuration.mergePolicies, schema: schema)
        let schema = self.schema
        try ChangeCapture.withoutCapture {
            try database.write { db in
                // A table that left the synced set is new again when it comes back: rows
                // written meanwhile were not logged for sync, and go out as a new table's do.
                let synced = schema.tables.map(\.name)
                try db.execute(
                    sql: """
                        DELETE FROM \(MetadatabaseTable.tableSchemas.qualifiedName)
                        WHERE tableName NOT IN (\(synced.map { _ in "?" }.joined(separator: ", ")))
                        """,
                    arguments: StatementArguments(synced))
                var newTables: [SyncedTable] = []
                for table in schema.tables {
                    let columns = table.columns.map(\.name)
                    let storedText = try String.fetchOne(
                        db, sql: "SELECT columns FROM \(MetadatabaseTable.tableSchemas.qualifiedName) WHERE tableName = ?",
                        arguments: [table.name])
                    let stored = try storedText.map { try SyncJSON.decode([String].self, from: $0) }
                    if stored == nil {
                        newTables.append(table)
                    } else if let stored, stored != columns {
                        try fillNewColumns(of: table, added: columns.filter { !stored.contains($0) }, in: db)
                    }
                    try db.execute(
                        sql: "INSERT OR REPLACE INTO \(MetadatabaseTable.tableSchemas.qualifiedName) (tableName, columns) VALUES (?, ?)",
                        arguments: [table.name, try SyncJSON.encode(columns)])
                }
                // Rows that were here before sync knew their table — a table new to the synced
                // set, a fresh install's seed, the rows a migrator's erase seeded again after
                // the metadatabase was reset — go out with the oldest version there is (0):
                // what the cloud already holds for the same record was edited since and wins,
                // field by field; a row the cloud lacks is sent as it is. With the current
                // time instead, a re-seeded default would overwrite every device's edits.
                // One transaction for all of them, numbered after the log's: writers in other
                // processes number theirs from the log's last entry.
                let enrollment =
                    try Int64.fetchOne(db, sql: "SELECT COALESCE(MAX(\"transaction\"), 0) + 1 FROM main.\(ChangeLog.tableName)") ?? 1
                for table in newTables {
                    try db.execute(
                        sql: """
                            INSERT INTO main.\(ChangeLog.tableName) (tableName, primaryKey, operation, changedColumns, version, "transaction")
                            SELECT ?, \(table.primaryKey.quotedIdentifier), 'save', NULL, 0, ?
                            FROM main.\(table.name.quotedIdentifier)
                            """,
                        arguments: [table.name, enrollment])
                }
                var report = IncomingChanges.Report()
                try self.incomingChanges().applyRecordsOfNewTables(in: db, report: &report)
            }
        }
    }

    /// Copies into new columns the values the last known server records carry for them.
    private func fillNewColumns(of table: SyncedTable, added: [String], in db: Database) throws {
        guard !added.isEmpty else { return }
        let records = try db.fetchAll(
            sql:
                "SELECT lastKnownServerRecord FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE recordType = ? AND lastKnownServerRecord IS NOT NULL",
            arguments: [table.name]
        ) { row in try SyncJSON.decode(CloudRecord.self, from: try row[0]) }
        for record in records {
            guard let name = RecordName(record.id.name) else { continue }
            for column in added {
                guard let value = record.fields[column] else { continue }
                try db.execute(
                    sql:
                        "UPDATE main.\(table.name.quotedIdentifier) SET \(column.quotedIdentifier) = ? WHERE \(table.primaryKey.quotedIdentifier) = ?",
                    arguments: [value.databaseValue, name.primaryKey])
            }
        }
    }
}
