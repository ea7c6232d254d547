import Foundation
import StrataSQLite
import StrataSync
import Synchronization
import Testing

/// `migrateIntegerPrimaryKeysToUUIDs` on a realistic schema: every row, value and relationship
/// survives, keys become UUID text, and the schema's constraints, indexes, triggers and views
/// keep working.
@Suite(.timeLimit(.minutes(5))) struct UUIDKeyMigrationTests {
    /// Migrates the fixture in a `DatabaseMigrator` migration, with sequential UUIDs.
    func migrated() throws -> (DatabaseQueue, before: [[[DatabaseValue]]], summary: UUIDKeyMigrationSummary?) {
        let queue = try RemindersFixture.makeDatabase()
        let before = try queue.read { db in try RemindersFixture.snapshot(db) }
        let summary = Mutex<UUIDKeyMigrationSummary?>(nil)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("UUID keys") { db in
            let uuids = SequentialUUIDs()
            let result = try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables, uuid: uuids.next)
            summary.withLock { $0 = result }
        }
        try migrator.migrate(queue)
        return (queue, before, summary.withLock { $0 })
    }

    @Test func everyJoinIsTheSameOnceOldIdsAreMappedToNewOnes() throws {
        let (queue, before, _) = try migrated()
        try queue.read { db throws in
            let ids = try RemindersFixture.idMap(db)
            #expect(try RemindersFixture.snapshot(db) == RemindersFixture.translate(before, with: ids))
            // The translation did replace ids: nothing integer is left in a key or reference.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reminders WHERE typeof(id) <> 'text' OR typeof(listID) <> 'text'") == 0)
            #expect(
                try Int.fetchOne(db, sql: "SELECT count(*) FROM reminderTags WHERE typeof(reminderID) <> 'text' OR typeof(tagID) <> 'text'")
                    == 0)
        }
    }

    @Test func rowCountsAndNullReferencesAreKept() throws {
        let queue = try RemindersFixture.makeDatabase()
        let tables = ["lists", "reminders", "tags", "reminderTags", "attachments", "attachmentNotes", "auditLog"]
        func counts(_ db: Database) throws -> [Int] {
            try tables.map { try Int.fetchOne(db, sql: "SELECT count(*) FROM \($0)") ?? -1 }
        }
        let before = try queue.read { db throws in
            (
                counts: try counts(db),
                nullParents: try Int.fetchOne(db, sql: "SELECT count(*) FROM reminders WHERE parentID IS NULL"),
                nullAttachments: try Int.fetchOne(db, sql: "SELECT count(*) FROM attachments WHERE reminderID IS NULL")
            )
        }
        #expect(before.counts[1] > 1_000)
        _ = try queue.write { db in try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables) }
        try queue.read { db throws in
            #expect(try counts(db) == before.counts)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reminders WHERE parentID IS NULL") == before.nullParents)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM attachments WHERE reminderID IS NULL") == before.nullAttachments)
        }
    }

    @Test func keysAreLowercaseUUIDTextIssuedInListAndRowidOrder() throws {
        let (queue, _, summary) = try migrated()
        let summaryValue = try #require(summary)
        try queue.read { db throws in
            // lists first (20 rows), then reminders in rowid order.
            #expect(try String.fetchOne(db, sql: "SELECT id FROM lists ORDER BY rowid LIMIT 1") == "00000000-0000-4000-8000-000000000001")
            #expect(
                try String.fetchOne(db, sql: "SELECT id FROM reminders ORDER BY rowid LIMIT 1") == "00000000-0000-4000-8000-000000000015")
            let ids = try String.fetchAll(db, sql: "SELECT id FROM reminders UNION ALL SELECT id FROM tags")
            #expect(ids.allSatisfy { UUID(uuidString: $0) != nil && $0 == $0.lowercased() })
            // The form Strata binds a UUID in.
            let first = try #require(try UUID.fetchOne(db, sql: "SELECT id FROM lists ORDER BY rowid LIMIT 1"))
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM lists WHERE id = ?", arguments: [first]) == 1)
        }
        let rows = summaryValue.migratedTables.map(\.rows)
        #expect(summaryValue.migratedTables.map(\.table) == RemindersFixture.migratedTables)
        #expect(rows[0] == 20 && rows[2] == 30)
        #expect(
            Set(summaryValue.foreignKeyColumns.map { "\($0.table).\($0.column)→\($0.parentTable)" }) == [
                "reminders.listID→lists", "reminders.parentID→reminders", "reminderTags.reminderID→reminders",
                "reminderTags.tagID→tags", "attachments.reminderID→reminders",
            ])
        // Children before parents; attachmentNotes only references a rebuilt table.
        #expect(Set(summaryValue.rebuiltTables) == ["lists", "reminders", "tags", "reminderTags", "attachments", "attachmentNotes"])
        let order = summaryValue.rebuiltTables
        #expect(try #require(order.firstIndex(of: "attachmentNotes")) < #require(order.firstIndex(of: "attachments")))
        #expect(try #require(order.firstIndex(of: "reminderTags")) < #require(order.firstIndex(of: "reminders")))
        #expect(try #require(order.firstIndex(of: "reminders")) < #require(order.firstIndex(of: "lists")))
    }

    @Test func theSchemaKeepsItsConstraintsIndexesTriggersAndViews() throws {
        let (queue, _, _) = try migrated()
        try queue.write { db throws in
            let columns = try db.fetchAll(sql: "SELECT name, type, \"notnull\", pk FROM pragma_table_info('reminders') ORDER BY cid") {
                row in
                "\(try row[0] as String) \(try row[1] as String) \(try row[2] as Int) \(try row[3] as Int)"
            }
            #expect(
                columns == [
                    "id TEXT 1 1", "listID TEXT 1 0", "parentID TEXT 0 0", "title TEXT 1 0", "notes TEXT 1 0", "priority INTEGER 0 0",
                    "isCompleted INTEGER 1 0", "dueDate TEXT 0 0",
                ])
            let sql = try #require(try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'reminders'"))
            #expect(!sql.uppercased().contains("AUTOINCREMENT"))
            #expect(sql.contains("-- the reminder this one is a subtask of"))
            #expect(sql.contains("ON DELETE CASCADE ON UPDATE CASCADE"))
            #expect(
                try String.fetchAll(
                    db, sql: "SELECT name FROM sqlite_schema WHERE type IN ('index', 'trigger', 'view') AND sql IS NOT NULL ORDER BY name")
                    == ["reminderDetails", "reminders_audit", "reminders_dueDate", "reminders_listID"])
            // The partial index is still partial.
            #expect(
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'reminders_dueDate'")?.contains(
                    "WHERE dueDate IS NOT NULL") == true)
            // The composite UNIQUE of the join table is kept.
            #expect(
                try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_index_list('reminderTags') WHERE \"unique\" = 1 AND origin = 'u'")
                    == 1)
            // CHECK, DEFAULT, COLLATE and the generated column.
            let list = try #require(try String.fetchOne(db, sql: "SELECT id FROM lists ORDER BY rowid LIMIT 1"))
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO lists (id, title) VALUES ('x', '')") }
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO reminders (id, listID, title, priority) VALUES ('y', ?, 'a', 9)", arguments: [list])
            }
            #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO lists (id, title) VALUES (NULL, 'no key')") }
            try db.execute(sql: "INSERT INTO reminders (id, listID, title) VALUES ('new-reminder', ?, 'Buy Milk')", arguments: [list])
            #expect(try Int.fetchOne(db, sql: "SELECT titleLength FROM reminders WHERE title = 'BUY MILK'") == 8)
            #expect(try String.fetchOne(db, sql: "SELECT notes FROM reminders WHERE id = 'new-reminder'") == "")
            #expect(try Int.fetchOne(db, sql: "SELECT color FROM lists WHERE id = ?", arguments: [list]) == 1000)
            // The trigger fires, and the view joins the new keys.
            #expect(try String.fetchOne(db, sql: "SELECT message FROM auditLog ORDER BY id DESC LIMIT 1") == "inserted Buy Milk")
            #expect(try String.fetchOne(db, sql: "SELECT listTitle FROM reminderDetails WHERE id = 'new-reminder'") == "List 1")
            // A table that only references rebuilt ones keeps its AUTOINCREMENT and its sequence
            // (notes 91 to 100 were deleted: 101 comes next, not 91).
            try db.execute(sql: "INSERT INTO attachmentNotes (attachmentID, body) VALUES (3, 'next')")
            #expect(try Int.fetchOne(db, sql: "SELECT max(id) FROM attachmentNotes") == 101)
            // The migrated tables' sequences are gone with their AUTOINCREMENT.
            #expect(
                try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_sequence WHERE name IN ('lists', 'reminders', 'reminderTags')") == 0)
            // Nothing of the migration's own is left.
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'strata_keymig%'") == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_schema WHERE name LIKE 'strata_keymig%'") == 0)
        }
    }

    @Test func cascadesAndSetNullStillWork() throws {
        let (queue, _, _) = try migrated()
        try queue.write { db throws in
            // A list holding parents of subtasks that sit in other lists.
            let list = try #require(
                try String.fetchOne(
                    db,
                    sql: "SELECT p.listID FROM reminders AS c JOIN reminders AS p ON p.id = c.parentID WHERE c.listID <> p.listID LIMIT 1"))
            let reminders = try String.fetchAll(db, sql: "SELECT id FROM reminders WHERE listID = ?", arguments: [list])
            #expect(reminders.count > 10)
            let links =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM reminderTags WHERE reminderID IN (SELECT id FROM reminders WHERE listID = ?)",
                    arguments: [list]) ?? 0
            let totalLinks = try Int.fetchOne(db, sql: "SELECT count(*) FROM reminderTags") ?? 0
            let orphanedSubtasks =
                try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM reminders WHERE listID <> ?1 AND parentID IN (SELECT id FROM reminders WHERE listID = ?1)",
                    arguments: [list]) ?? 0
            #expect(orphanedSubtasks > 0)
            try db.execute(sql: "DELETE FROM lists WHERE id = ?", arguments: [list])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reminders WHERE listID = ?", arguments: [list]) == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reminderTags") == totalLinks - links)
            // Subtasks in other lists lost their parent (SET NULL), attachments theirs too.
            #expect(
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM reminders WHERE parentID IS NOT NULL AND parentID NOT IN (SELECT id FROM reminders)")
                    == 0)
            #expect(
                try Int.fetchOne(
                    db,
                    sql: "SELECT count(*) FROM attachments WHERE reminderID IS NOT NULL AND reminderID NOT IN (SELECT id FROM reminders)")
                    == 0)
            // ON UPDATE CASCADE follows a renamed key.
            let other = try #require(try String.fetchOne(db, sql: "SELECT listID FROM reminders LIMIT 1"))
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM reminders WHERE listID = ?", arguments: [other])
            try db.execute(sql: "UPDATE lists SET id = 'renamed' WHERE id = ?", arguments: [other])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reminders WHERE listID = 'renamed'") == count)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_foreign_key_check") == 0)
        }
    }

    @Test func theMigratorRecordsItOnceAndDoesNotRunItAgain() throws {
        let queue = try RemindersFixture.makeDatabase()
        let uuids = SequentialUUIDs()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("UUID keys") { db in
            try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables, uuid: uuids.next)
        }
        try migrator.migrate(queue)
        let issued = uuids.issued
        let ids = try queue.read { db in try String.fetchAll(db, sql: "SELECT id FROM reminders ORDER BY rowid") }
        try migrator.migrate(queue)
        #expect(uuids.issued == issued)
        try queue.read { db throws in
            #expect(try migrator.appliedIdentifiers(db) == ["UUID keys"])
            #expect(try String.fetchAll(db, sql: "SELECT id FROM reminders ORDER BY rowid") == ids)
        }
    }

    @Test func eraseDatabaseOnSchemaChangeSeesTheSameSchemaAfterTheMigration() throws {
        // The migrator compares the file's schema with a scratch database migrated from
        // nothing: the migration must leave the same SQL text in both, or every launch of a
        // debug build would erase the user's data.
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in try db.execute(sql: RemindersFixture.schema) }
        try migrator.migrate(queue)
        try queue.write { db in try db.execute(sql: RemindersFixture.data) }
        migrator.registerMigration("v2: UUID keys") { db in
            try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables)
        }
        try migrator.migrate(queue)
        let before = try queue.read { db in try RemindersFixture.snapshot(db) }
        migrator.eraseDatabaseOnSchemaChange = true
        try migrator.migrate(queue)
        try queue.read { db throws in
            #expect(try RemindersFixture.snapshot(db) == before)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM reminders") == 1_188)
        }
    }

    @Test func runningItAgainIsRefusedAndChangesNothing() throws {
        let (queue, _, _) = try migrated()
        let before = try queue.read { db in try RemindersFixture.snapshot(db) }
        let schema = try queue.read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name")
        }
        for tables in [RemindersFixture.migratedTables, ["tags"]] {
            #expect(throws: UUIDKeyMigrationError.primaryKeyAlreadyText(table: tables[0], column: "id")) {
                _ = try queue.write { db in try db.migrateIntegerPrimaryKeysToUUIDs(tables: tables) }
            }
        }
        try queue.read { db throws in
            #expect(try RemindersFixture.snapshot(db) == before)
            #expect(try String.fetchAll(db, sql: "SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name") == schema)
        }
    }

    @Test func itWorksWithForeignKeysEnforcedInsideAnOrdinaryTransaction() throws {
        // Outside the migrator foreign keys stay on (they cannot be switched off inside a
        // transaction): dropping a parent table must not cascade into the copies.
        let queue = try RemindersFixture.makeDatabase()
        let before = try queue.read { db in try RemindersFixture.snapshot(db) }
        try queue.write { db throws in
            #expect(try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true)
            let uuids = SequentialUUIDs()
            try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables, uuid: uuids.next)
            #expect(try Bool.fetchOne(db, sql: "PRAGMA defer_foreign_keys") == false)
        }
        try queue.read { db throws in
            #expect(try RemindersFixture.snapshot(db) == RemindersFixture.translate(before, with: try RemindersFixture.idMap(db)))
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM auditLog") == 1_200)
        }
    }

    @Test func migratingOneTableRewritesTheReferencesOfTablesNotListed() throws {
        let queue = try RemindersFixture.makeDatabase()
        let before = try queue.read { db in try RemindersFixture.snapshot(db) }
        _ = try queue.write { db in try db.migrateIntegerPrimaryKeysToUUIDs(tables: ["tags"]) }
        try queue.read { db throws in
            let ids = try RemindersFixture.idMap(db, tables: ["tags"])
            // reminderTags keeps its integer key; its tagID holds the tags' UUIDs.
            #expect(try String.fetchOne(db, sql: "SELECT type FROM pragma_table_info('reminderTags') WHERE name = 'tagID'") == "TEXT")
            #expect(try String.fetchOne(db, sql: "SELECT type FROM pragma_table_info('reminderTags') WHERE name = 'id'") == "INTEGER")
            #expect(try RemindersFixture.snapshot(db) == RemindersFixture.translate(before, with: ids))
        }
    }

    @Test func aFailureHalfwayChangesNothing() throws {
        let queue = try RemindersFixture.makeDatabase()
        let before = try queue.read { db in try RemindersFixture.snapshot(db) }
        struct GeneratorFailed: Error {}
        var issued = 0
        #expect(throws: GeneratorFailed.self) {
            try queue.write { db throws in
                try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables) {
                    issued += 1
                    if issued == 500 { throw GeneratorFailed() }
                    return UUID()
                }
            }
        }
        // Inside a caller's transaction that goes on after catching the error, too.
        try queue.write { db throws in
            let uuids = SequentialUUIDs()
            #expect(throws: UUIDKeyMigrationError.duplicateUUID(table: "reminders", uuid: "00000000-0000-4000-8000-000000000001")) {
                try db.migrateIntegerPrimaryKeysToUUIDs(tables: RemindersFixture.migratedTables) {
                    uuids.issued == 25 ? SequentialUUIDs.uuid(1) : uuids.next()
                }
            }
            #expect(try RemindersFixture.snapshot(db) == before)
        }
        try queue.read { db throws in
            #expect(try RemindersFixture.snapshot(db) == before)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema WHERE name LIKE 'strata_keymig%'") == 0)
        }
    }
}
