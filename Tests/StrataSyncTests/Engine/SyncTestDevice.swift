import Foundation
import StrataSQLite
@testable import StrataSync
import Synchronization

/// A wall clock the test moves by hand.
final class ManualWallClock: Sendable {
    let milliseconds: Atomic<Int64>
    init(_ start: Int64 = 1_700_000_000_000) { milliseconds = Atomic(start) }
    func advance(by delta: Int64 = 1_000) { milliseconds.add(delta, ordering: .relaxed) }
    var read: @Sendable () -> Int64 { { self.milliseconds.load(ordering: .relaxed) } }
}

/// One device: its own database and engine, over a shared mock cloud.
struct SyncTestDevice {
    static let schemaSQL = """
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

    let database: DatabaseQueue
    let engine: SyncEngine
    let time: ManualWallClock

    init(
        _ id: String, cloud: MockCloud, user: String = "alice", time: ManualWallClock = ManualWallClock(),
        schema: String = SyncTestDevice.schemaSQL, tables: [String] = ["games", "players"], batchSize: Int = 400,
        fetchPageSize: Int = 200, database: DatabaseQueue? = nil
    ) throws {
        let database = try database ?? DatabaseQueue()
        if !schema.isEmpty { try database.write { db in try db.execute(sql: schema) } }
        self.database = database
        self.time = time
        engine = try SyncEngine(
            for: database, tableNames: tables, container: cloud.container(user: user),
            configuration: SyncEngineConfiguration(
                deviceID: id, physicalTime: time.read, batchSize: batchSize, fetchPageSize: fetchPageSize, schedule: nil),
            startImmediately: false)
    }

    func execute(_ sql: String) async throws {
        time.advance()
        try await database.write { db in try db.execute(sql: sql) }
    }

    /// Every synced row, as text, for comparing devices.
    func rows() async throws -> [String] {
        try await database.read { db in
            try String.fetchAll(db, sql: "SELECT 'game ' || id || ' ' || quote(title) || ' ' || quote(score) FROM games ORDER BY id")
                + String.fetchAll(db, sql: "SELECT 'player ' || id || ' ' || quote(gameID) || ' ' || quote(name) FROM players ORDER BY id")
        }
    }

    func pending() async throws -> Int { try await engine.pendingCount() }
}
