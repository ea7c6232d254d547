import Foundation
import Logging
import StrataSQLite
import StrataSync
import StrataTestSupport
import Synchronization

/// A wall clock a test moves by hand: Unix time in milliseconds, for a ``SyncTestDevice``, a
/// `SyncEngineConfiguration` or a `HybridLogicalClock`. A test's devices may share one.
package final class ManualWallClock: Sendable {
    package let milliseconds: Atomic<Int64>

    package init(_ start: Int64 = 1_700_000_000_000) { milliseconds = Atomic(start) }

    /// Moves the clock by `delta` milliseconds (backwards when negative).
    package func advance(by delta: Int64 = 1_000) { milliseconds.add(delta, ordering: .relaxed) }

    /// Sets the clock to `value` milliseconds.
    package func set(_ value: Int64) { milliseconds.store(value, ordering: .relaxed) }

    /// The clock as a time source.
    package var read: @Sendable () -> Int64 { { self.milliseconds.load(ordering: .relaxed) } }
}

/// One device of a sync test: its own SQLite database and a `SyncEngine` over a cloud
/// container, driven by hand (never started by itself; no schedule unless given one), with a
/// wall clock the test moves.
///
/// Everything it does is async: it never blocks a cooperative thread.
package struct SyncTestDevice: Sendable {
    /// Games and their players, and a generated column the engine must leave out of records.
    package static let schemaSQL = """
        CREATE TABLE games (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            score INTEGER,
            titleLength INTEGER GENERATED ALWAYS AS (length(title)) VIRTUAL
        );
        CREATE TABLE players (
            id TEXT PRIMARY KEY NOT NULL,
            gameID TEXT REFERENCES games(id) ON DELETE CASCADE,
            name TEXT
        );
        """

    /// The tables of ``schemaSQL``, parents first.
    package static let tableNames = ["games", "players"]

    /// The device's id: its engine's device id.
    package let id: String
    package let database: DatabaseQueue
    package let engine: SyncEngine
    /// The engine's wall clock, which ``execute(_:)`` moves a second forward; nil when the
    /// engine reads the system's.
    package let time: ManualWallClock?

    /// A device over `container`.
    ///
    /// - Parameters:
    ///   - id: the engine's device id.
    ///   - time: the engine's wall clock; nil for the system's.
    ///   - schema: SQL run on the database first; empty runs nothing (for a `database` already
    ///     set up).
    ///   - tables: the synced tables.
    ///   - blobAssetThreshold: plain BLOB values larger than this travel as assets.
    ///   - schedule: the engine's automatic work; nil syncs only when the test says so. The
    ///     engine is not started either way.
    ///   - database: the database to sync; a new in-memory one by default.
    ///   - mergePolicies: the columns that do not merge by the default rule.
    package init(
        _ id: String, container: any CloudContainer, time: ManualWallClock? = ManualWallClock(),
        schema: String = SyncTestDevice.schemaSQL, tables: [String] = SyncTestDevice.tableNames,
        batchSize: Int = 400, fetchPageSize: Int = 200, blobAssetThreshold: Int = 256 * 1024,
        schedule: SyncSchedule? = nil, logger: Logger = Logger(label: "strata.sync"), database: DatabaseQueue? = nil,
        encryption: SyncEncryption = .endToEnd, mergePolicies: [MergePolicy] = [], maximumBatchesInFlight: Int = 4
    ) async throws {
        let database = try database ?? DatabaseQueue()
        if !schema.isEmpty { try await database.write { db in try db.execute(sql: schema) } }
        var configuration = SyncEngineConfiguration(
            deviceID: id, batchSize: batchSize, fetchPageSize: fetchPageSize, schedule: schedule,
            blobAssetThreshold: blobAssetThreshold, encryption: encryption, mergePolicies: mergePolicies)
        configuration.maximumBatchesInFlight = maximumBatchesInFlight
        if let time { configuration.physicalTime = time.read }
        // Creating an engine writes to the database synchronously: on a thread of its own, never
        // a cooperative one.
        engine = try await runOnBackgroundThread { [configuration] in
            try SyncEngine(
                for: database, tableNames: tables, container: container, configuration: configuration, logger: logger,
                startImmediately: false)
        }
        self.id = id
        self.database = database
        self.time = time
    }

    /// A device signed in to `cloud` as `user`.
    package init(
        _ id: String, cloud: MockCloud, user: String = "alice", time: ManualWallClock? = ManualWallClock(),
        schema: String = SyncTestDevice.schemaSQL, tables: [String] = SyncTestDevice.tableNames,
        batchSize: Int = 400, fetchPageSize: Int = 200, blobAssetThreshold: Int = 256 * 1024,
        schedule: SyncSchedule? = nil, logger: Logger = Logger(label: "strata.sync"), database: DatabaseQueue? = nil,
        encryption: SyncEncryption = .endToEnd, mergePolicies: [MergePolicy] = [], maximumBatchesInFlight: Int = 4
    ) async throws {
        try await self.init(
            id, container: cloud.container(user: user), time: time, schema: schema, tables: tables, batchSize: batchSize,
            fetchPageSize: fetchPageSize, blobAssetThreshold: blobAssetThreshold, schedule: schedule, logger: logger,
            database: database, encryption: encryption, mergePolicies: mergePolicies, maximumBatchesInFlight: maximumBatchesInFlight)
    }

    /// Moves the clock (a manual one) a second forward, then runs `sql` in one transaction.
    package func execute(_ sql: String) async throws {
        time?.advance()
        try await database.write { db in try db.execute(sql: sql) }
    }

    /// Every game and player, as text, for comparing devices.
    package func rows() async throws -> [String] {
        try await database.read { db in
            try String.fetchAll(db, sql: "SELECT 'game ' || id || ' ' || quote(title) || ' ' || quote(score) FROM games ORDER BY id")
                + String.fetchAll(db, sql: "SELECT 'player ' || id || ' ' || quote(gameID) || ' ' || quote(name) FROM players ORDER BY id")
        }
    }

    /// The first column of every row `sql` selects, as text.
    package func strings(_ sql: String) async throws -> [String] {
        try await database.read { db in try String.fetchAll(db, sql: sql) }
    }

    /// How many local records wait to be sent.
    package func pending() async throws -> Int { try await engine.pendingCount() }

    /// The records `cloud` holds in `zone`, opened with this device's keys: what the cloud
    /// stores is sealed, so a test reads fields through a device that holds the keys.
    package func cloudRecords(
        _ cloud: MockCloud, in zone: CloudZoneID = CloudZoneID(name: "strata.default", owner: "alice")
    )
        async throws -> [CloudRecord]
    {
        var opened: [CloudRecord] = []
        for record in cloud.records(in: zone) { opened.append(try await engine.openCloudRecord(record)) }
        return opened
    }
}
