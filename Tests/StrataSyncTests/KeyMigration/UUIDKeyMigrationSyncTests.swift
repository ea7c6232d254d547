import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// After the migration, the sync engine accepts the tables and they sync between devices: the
/// device that had the data sends it, a new device receives every row and relationship, and
/// edits go both ways.
@Suite(.timeLimit(.minutes(5))) struct UUIDKeyMigrationSyncTests {
    /// A schema from before sync that follows sync's other rules (no UNIQUE besides the key,
    /// no foreign key cycle).
    static let schema = """
        CREATE TABLE lists (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL DEFAULT '');
        CREATE TABLE reminders (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            listID INTEGER NOT NULL REFERENCES lists(id) ON DELETE CASCADE,
            title TEXT NOT NULL DEFAULT '',
            isCompleted INTEGER NOT NULL DEFAULT 0
        );
        CREATE INDEX reminders_listID ON reminders (listID);
        CREATE TABLE tags (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL DEFAULT '');
        CREATE TABLE reminderTags (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            reminderID INTEGER NOT NULL REFERENCES reminders(id) ON DELETE CASCADE,
            tagID INTEGER NOT NULL REFERENCES tags(id) ON DELETE CASCADE
        );
        CREATE TABLE notes (id INTEGER PRIMARY KEY, reminderID INTEGER REFERENCES reminders(id) ON DELETE SET NULL, body TEXT);
        """
    static let tables = ["lists", "reminders", "tags", "reminderTags", "notes"]
    static let data = """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5)
        INSERT INTO lists (title) SELECT 'List ' || i FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200)
        INSERT INTO reminders (listID, title, isCompleted) SELECT i % 5 + 1, 'Reminder ' || i, i % 2 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10)
        INSERT INTO tags (title) SELECT 'Tag ' || i FROM n;
        INSERT INTO reminderTags (reminderID, tagID) SELECT id, id % 10 + 1 FROM reminders;
        INSERT INTO reminderTags (reminderID, tagID) SELECT id, (id * 3) % 10 + 1 FROM reminders WHERE id % 2 = 0;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
        INSERT INTO notes (reminderID, body) SELECT CASE WHEN i % 3 = 0 THEN NULL ELSE i * 4 END, 'note ' || i FROM n;
        """

    /// The app's migrations: the schema as it shipped, then the move to UUID keys.
    static func migrator(uuids: SequentialUUIDs? = nil) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: schema) }
        migrator.registerMigration("v2: UUID keys for sync") { db in
            try db.migrateIntegerPrimaryKeysToUUIDs(tables: tables, uuid: { uuids?.next() ?? UUID() })
        }
        return migrator
    }

    /// Every relationship, by titles (the same before and after the migration).
    static let relationshipsSQL = [
        "SELECT l.title || ' / ' || r.title || ' ' || r.isCompleted FROM reminders AS r JOIN lists AS l ON l.id = r.listID ORDER BY r.title",
        "SELECT r.title || ' # ' || t.title FROM reminderTags AS rt JOIN reminders AS r ON r.id = rt.reminderID JOIN tags AS t ON t.id = rt.tagID ORDER BY 1",
        "SELECT n.body || ' @ ' || ifnull(r.title, '-') FROM notes AS n LEFT JOIN reminders AS r ON r.id = n.reminderID ORDER BY 1",
    ]
    /// Every row with its keys.
    static let rowsSQL = [
        "SELECT id || ' ' || title FROM lists ORDER BY id",
        "SELECT id || ' ' || listID || ' ' || title || ' ' || isCompleted FROM reminders ORDER BY id",
        "SELECT id || ' ' || title FROM tags ORDER BY id",
        "SELECT id || ' ' || reminderID || ' ' || tagID FROM reminderTags ORDER BY id",
        "SELECT id || ' ' || ifnull(reminderID, '-') || ' ' || body FROM notes ORDER BY id",
    ]

    func strings(_ device: SyncTestDevice, _ queries: [String]) async throws -> [[String]] {
        var result: [[String]] = []
        for sql in queries { result.append(try await device.strings(sql)) }
        return result
    }

    @Test func migratedTablesSyncBetweenTwoDevices() async throws {
        // Device a has used the app without sync: integer keys and data.
        let databaseA = try DatabaseQueue()
        var v1 = DatabaseMigrator()
        v1.registerMigration("v1") { db in try db.execute(sql: Self.schema) }
        try await v1.migrate(databaseA)
        try await databaseA.write { db in try db.execute(sql: Self.data) }
        let before = try await databaseA.read { db in try Self.relationshipsSQL.map { try String.fetchAll(db, sql: $0) } }
        #expect(before[2].contains("note 3 @ -"))

        // The update migrates, and the engine accepts the tables; a new device b has none of it.
        try await Self.migrator(uuids: SequentialUUIDs()).migrate(databaseA)
        let databaseB = try DatabaseQueue()
        try await Self.migrator().migrate(databaseB)
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, schema: "", tables: Self.tables, database: databaseA)
        let b = try await SyncTestDevice("b", cloud: cloud, schema: "", tables: Self.tables, database: databaseB)
        #expect(a.engine.schema.tables.map(\.name) == ["lists", "reminders", "tags", "reminderTags", "notes"])
        #expect(try await strings(a, Self.relationshipsSQL) == before)

        // The rows the migration rewrote were written before the engine existed: a first sync
        // sends them all.
        try await a.engine.syncChanges()
        #expect(try await a.pending() == 0)
        try await b.engine.syncChanges()
        #expect(try await strings(b, Self.rowsSQL) == strings(a, Self.rowsSQL))
        #expect(try await strings(b, Self.relationshipsSQL) == before)
        #expect(try await b.strings("SELECT CAST(count(*) AS TEXT) FROM notes WHERE reminderID IS NULL") == ["16"])

        // Edits on b (a new reminder in a migrated list, a tag link, a completion, a list
        // deleted with its reminders) reach a.
        let list = try #require(try await b.strings("SELECT id FROM lists ORDER BY id LIMIT 1").first)
        let tag = try #require(try await b.strings("SELECT id FROM tags ORDER BY id LIMIT 1").first)
        let doomed = try #require(try await b.strings("SELECT id FROM lists ORDER BY id DESC LIMIT 1").first)
        try await b.execute(
            """
            INSERT INTO reminders (id, listID, title) VALUES ('new-reminder', '\(list)', 'Made on b');
            INSERT INTO reminderTags (id, reminderID, tagID) VALUES ('new-link', 'new-reminder', '\(tag)');
            UPDATE reminders SET isCompleted = 1 WHERE title = 'Reminder 1';
            DELETE FROM lists WHERE id = '\(doomed)';
            """)
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        #expect(try await strings(a, Self.rowsSQL) == strings(b, Self.rowsSQL))
        #expect(try await a.strings("SELECT CAST(count(*) AS TEXT) FROM reminders WHERE listID = '\(doomed)'") == ["0"])
        #expect(
            try await a.strings(
                "SELECT r.title FROM reminderTags AS rt JOIN reminders AS r ON r.id = rt.reminderID WHERE rt.id = 'new-link'") == [
                    "Made on b"
                ])

        // And from a back to b, with a new tag linked to a migrated reminder.
        try await a.execute(
            """
            INSERT INTO tags (id, title) VALUES ('tag-from-a', 'From a');
            INSERT INTO reminderTags (id, reminderID, tagID) SELECT 'link-from-a', id, 'tag-from-a' FROM reminders WHERE title = 'Reminder 2';
            """)
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        #expect(try await strings(b, Self.rowsSQL) == strings(a, Self.rowsSQL))
        #expect(try await a.pending() == 0)
        #expect(try await b.pending() == 0)
    }

    @Test func theOtherRulesOfSyncStillApplyAfterTheMigration() async throws {
        // The fixture's join table keeps its composite UNIQUE and reminders their
        // self-reference: the keys are fit for sync, the schema is not yet.
        let queue = try RemindersFixture.makeDatabase()
        _ = try await queue.write { db in try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables) }
        let error = try await queue.read { db -> SyncSchemaError? in
            do {
                _ = try SyncSchema.read(tables: RemindersFixture.migratedTables, in: db)
                return nil
            } catch let error as SyncSchemaError {
                return error
            }
        }
        guard case .uniqueConstraint(let table, _, let columns) = error else {
            Issue.record("expected the UNIQUE constraint to be refused, got \(String(describing: error))")
            return
        }
        #expect(table == "reminderTags" && columns == ["reminderID", "tagID"])
        let keys = try await queue.read { db throws in
            try RemindersFixture.migratedTables.map { try SyncedTable.read($0, in: db).columns.first { $0.name == "id" }?.declaredType }
        }
        #expect(keys == ["TEXT", "TEXT", "TEXT", "TEXT"])
        // Without the join table, the self-reference (a subtask's parent) is the rule broken.
        let selfReference = try await queue.read { db -> SyncSchemaError? in
            do {
                _ = try SyncSchema.read(tables: ["lists", "reminders"], in: db)
                return nil
            } catch let error as SyncSchemaError {
                return error
            }
        }
        #expect(selfReference == .foreignKeyCycle(["reminders", "reminders"]))
    }
}
