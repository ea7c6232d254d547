import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// A child saved under a parent another device deleted meanwhile: the foreign key's ON DELETE
/// applies on the device that saved it, as it did where the parent was deleted.
@Suite(.timeLimit(.minutes(5))) struct ReferenceViolationTests {
    static func schema(onDelete: String) -> String {
        """
        CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL DEFAULT '', score INTEGER);
        CREATE TABLE players (
            id TEXT PRIMARY KEY NOT NULL,
            gameID TEXT DEFAULT 'lobby' REFERENCES games(id) ON DELETE \(onDelete),
            name TEXT
        );
        """
    }

    func rows(_ device: SyncTestDevice) async throws -> [String] {
        try await device.database.read { db in
            try String.fetchAll(db, sql: "SELECT 'game ' || id FROM games ORDER BY id")
                + String.fetchAll(db, sql: "SELECT 'player ' || id || ' ' || quote(gameID) FROM players ORDER BY id")
        }
    }

    @Test(arguments: [
        ("CASCADE", ["game lobby"]),
        ("SET NULL", ["game lobby", "player p1 NULL", "player p2 NULL"]),
        ("SET DEFAULT", ["game lobby", "player p1 'lobby'", "player p2 'lobby'"]),
    ])
    func aChildOfADeletedParent(onDelete: String, expected: [String]) async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, time: time, schema: Self.schema(onDelete: onDelete))
        let b = try await SyncTestDevice("b", cloud: cloud, time: time, schema: Self.schema(onDelete: onDelete))
        try await a.execute("INSERT INTO games (id) VALUES ('lobby'), ('g1'); INSERT INTO players (id, gameID) VALUES ('p1', 'g1')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await a.execute("DELETE FROM games WHERE id = 'g1'")
        try await b.execute("INSERT INTO players (id, gameID) VALUES ('p2', 'g1')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()  // referenceViolation: g1 is gone from the cloud
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        let (rowsA, rowsB) = (try await rows(a), try await rows(b))
        #expect(rowsA == expected)
        #expect(rowsB == expected)
        #expect(try await a.pending() == 0)
        #expect(try await b.pending() == 0)
    }
}
