import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// Devices on different versions of the app: a newer one adds a column and a table; the older
/// one keeps what it does not know, never erases it, and applies it after its own migration.
@Suite(.timeLimit(.minutes(5))) struct SchemaEvolutionTests {
    static let newerSchema =
        SyncTestDevice.schemaSQL + """
            ALTER TABLE games ADD COLUMN rating INTEGER;
            CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, gameID TEXT REFERENCES games(id) ON DELETE CASCADE, text TEXT);
            """

    @Test func anOlderDeviceKeepsAndLaterAppliesWhatANewerOneSent() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let old = try await SyncTestDevice("old", cloud: cloud, time: time)
        let new = try await SyncTestDevice(
            "new", cloud: cloud, time: time, schema: Self.newerSchema, tables: ["games", "players", "notes"])
        try await new.execute(
            "INSERT INTO games (id, title, rating) VALUES ('g1', 'Poker', 5); INSERT INTO notes (id, gameID, text) VALUES ('n1', 'g1', 'bring chips')"
        )
        try await new.engine.syncChanges()
        try await old.engine.syncChanges()
        #expect(try await old.rows() == ["game g1 'Poker' NULL"])

        // The older device edits the record; the field it does not know survives in the cloud.
        try await old.execute("UPDATE games SET title = 'Poker night' WHERE id = 'g1'")
        try await old.engine.syncChanges()
        try await new.engine.syncChanges()
        let rating = try await new.database.read { db in try Int.fetchOne(db, sql: "SELECT rating FROM games WHERE id = 'g1'") }
        #expect(rating == 5)
        #expect(try await new.rows() == ["game g1 'Poker night' NULL"])

        // The older device migrates and syncs the new table: the kept fields and records apply.
        old.engine.stop()
        try await old.database.write { db in
            try db.execute(
                sql: """
                    ALTER TABLE games ADD COLUMN rating INTEGER;
                    CREATE TABLE notes (id TEXT PRIMARY KEY NOT NULL, gameID TEXT REFERENCES games(id) ON DELETE CASCADE, text TEXT);
                    """)
        }
        let upgraded = try await SyncTestDevice(
            "old", cloud: cloud, time: time, schema: "", tables: ["games", "players", "notes"], database: old.database)
        let (oldRating, note) = try await upgraded.database.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT rating FROM games WHERE id = 'g1'"),
                try String.fetchOne(db, sql: "SELECT text FROM notes WHERE id = 'n1'")
            )
        }
        #expect(oldRating == 5)
        #expect(note == "bring chips")
        try await upgraded.engine.syncChanges()
        #expect(try await upgraded.pending() == 0)
    }

    @Test func aRecordWithAFieldOfTheWrongTypeIsQuarantinedAndSyncGoesOn() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        let database = cloud.container(user: "alice").privateDatabase
        try await database.saveZones([zone])
        // Written by another client that holds the keys (sealed as an engine seals).
        _ = try await database.modifyRecords(
            saving: [
                try await a.engine.sealForCloud(
                    CloudRecord(
                        id: CloudRecordID(name: "bad:games", zone: zone), type: "games",
                        fields: ["title": .text("x"), "score": .text("lots")])),
                try await a.engine.sealForCloud(
                    CloudRecord(
                        id: CloudRecordID(name: "good:games", zone: zone), type: "games",
                        fields: ["title": .text("fine"), "score": .integer(2)])),
            ],
            deleting: [])
        try await a.engine.fetchChanges()
        #expect(try await a.rows() == ["game good 'fine' 2"])
        #expect(a.engine.status.quarantinedCount == 1)
        let reason = try await a.database.write { db in
            try String.fetchOne(db, sql: "SELECT error FROM strata_sync.quarantined_records WHERE recordName = 'bad:games'")
        }
        #expect(reason == "column score (INTEGER): expected a number, got text")
    }
}
