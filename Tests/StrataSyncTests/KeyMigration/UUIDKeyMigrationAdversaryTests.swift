import Foundation
import StrataSQLite
import StrataSync
import Testing

/// Schemas written the many ways SQLite accepts: quoted names with spaces and quotes, keyword
/// columns, mixed case, comments, references inline or as table constraints, untyped columns,
/// STRICT and WITHOUT ROWID children, conflict clauses.
@Suite(.timeLimit(.minutes(5))) struct UUIDKeyMigrationAdversaryTests {
    /// Runs `sql`, migrates `tables` with sequential UUIDs (with foreign keys enforced, or in a
    /// migrator, which turns them off), and returns the queue.
    func migrate(_ sql: String, tables: [String], inMigrator: Bool = false) throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: sql) }
        if inMigrator {
            var migrator = DatabaseMigrator()
            migrator.registerMigration("UUID keys") { db in
                let uuids = SequentialUUIDs()
                try db.migrateIntegerPrimaryKeysToUUIDs(tables: tables, uuid: uuids.next)
            }
            try migrator.migrate(queue)
        } else {
            let uuids = SequentialUUIDs()
            _ = try queue.write { db in try db.migrateIntegerPrimaryKeysToUUIDs(tables: tables, uuid: uuids.next) }
        }
        try queue.read { db throws in #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM pragma_foreign_key_check") == 0) }
        return queue
    }

    func uuid(_ number: Int) -> String { SequentialUUIDs.uuid(number).uuidString.lowercased() }

    @Test(arguments: [false, true]) func quotedNamesSpacesKeywordsAndMixedCase(inMigrator: Bool) throws {
        let queue = try migrate(
            #"""
            CREATE TABLE "My Lists" ( -- a comment, (with parentheses
                [ID] integer NOT NULL CONSTRAINT "the key" PRIMARY KEY ON CONFLICT ABORT AUTOINCREMENT /* why */,
                `order` INT DEFAULT (1 + 2),
                "select" TEXT CHECK ("select" <> 'a, b)') COLLATE RTRIM,
                'quoted "name"' TEXT
            );
            CREATE TABLE "Items, ""Quoted""" (
                "Item Id" INTEGER PRIMARY KEY,
                ListRef BIGINT CONSTRAINT fk REFERENCES "my lists" ON DELETE CASCADE,
                "group" UNSIGNED BIG INT -- no comma after me
            );
            CREATE INDEX "by list" ON "Items, ""Quoted""" (ListRef, "group" DESC);
            INSERT INTO "My Lists" (ID, "order", "select", "quoted ""name""") VALUES (10, 1, 'x', 'y'), (20, 2, 'z', NULL);
            INSERT INTO "Items, ""Quoted""" VALUES (1, 10, 5), (2, 20, 6), (3, NULL, 7), (4, 10, NULL);
            """#, tables: ["my LISTS", "items, \"quoted\""], inMigrator: inMigrator)
        try queue.read { db throws in
            #expect(
                try String.fetchAll(
                    db,
                    sql:
                        "SELECT \"Item Id\" || ' ' || ifnull(ListRef, 'NULL') || ' ' || ifnull(\"group\", 'NULL') FROM \"Items, \"\"Quoted\"\"\" ORDER BY rowid"
                )
                    == ["\(uuid(3)) \(uuid(1)) 5", "\(uuid(4)) \(uuid(2)) 6", "\(uuid(5)) NULL 7", "\(uuid(6)) \(uuid(1)) NULL"])
            #expect(
                try String.fetchAll(db, sql: "SELECT \"ID\" || ' ' || \"order\" FROM \"My Lists\" ORDER BY rowid") == [
                    "\(uuid(1)) 1", "\(uuid(2)) 2",
                ])
            let columns = try String.fetchAll(
                db, sql: "SELECT name || ' ' || type || ' ' || \"notnull\" || ' ' || pk FROM pragma_table_info('My Lists')")
            #expect(columns == ["ID TEXT 1 1", "order INT 0 0", "select TEXT 0 0", "quoted \"name\" TEXT 0 0"])
            let items = try String.fetchAll(db, sql: "SELECT name || ' ' || type FROM pragma_table_info('Items, \"Quoted\"')")
            #expect(items == ["Item Id TEXT", "ListRef TEXT", "group UNSIGNED BIG INT"])
            let sql = try #require(try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'My Lists'"))
            for kept in [
                "-- a comment, (with parentheses", "CONSTRAINT \"the key\"", "ON CONFLICT ABORT", "/* why */", "DEFAULT (1 + 2)",
                "COLLATE RTRIM", "'a, b)'",
            ] {
                #expect(sql.contains(kept), "\(sql) lost \(kept)")
            }
            #expect(
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'by list'")?.contains("\"group\" DESC") == true)
            #expect(try String.fetchOne(db, sql: "SELECT on_delete FROM pragma_foreign_key_list('Items, \"Quoted\"')") == "CASCADE")
        }
        try queue.write { db throws in
            // The CHECK with a comma and parenthesis inside its string still holds.
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO \"My Lists\" (ID, \"select\") VALUES ('n', 'a, b)')")
            }
            try db.execute(sql: "DELETE FROM \"My Lists\" WHERE ID = ?", arguments: [uuid(1)])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM \"Items, \"\"Quoted\"\"\"") == 2)
        }
    }

    @Test func referencesInlineAsTableConstraintsUntypedAndImplicit() throws {
        let queue = try migrate(
            """
            CREATE TABLE Folders (
                id INTEGER PRIMARY KEY,
                parent REFERENCES folders ON DELETE CASCADE, -- untyped, implicit key, self-reference
                name TEXT
            );
            CREATE TABLE files (
                id INTEGER,
                folder INTEGER NOT NULL,
                owner_folder TEXT,
                PRIMARY KEY (id AUTOINCREMENT),
                CONSTRAINT in_folder FOREIGN KEY (folder) REFERENCES FOLDERS (ID) ON DELETE CASCADE ON UPDATE SET NULL,
                FOREIGN KEY (owner_folder) REFERENCES "folders" DEFERRABLE INITIALLY DEFERRED
            ) STRICT;
            INSERT INTO folders VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 2, 'b'), (4, 1, 'c');
            INSERT INTO files (id, folder, owner_folder) VALUES (7, 3, '2'), (8, 4, NULL), (9, 1, '1');
            """, tables: ["folders", "files"])
        try queue.read { db throws in
            #expect(
                try String.fetchAll(db, sql: "SELECT id || ' ' || ifnull(parent, '-') || ' ' || name FROM folders ORDER BY rowid")
                    == ["\(uuid(1)) - root", "\(uuid(2)) \(uuid(1)) a", "\(uuid(3)) \(uuid(2)) b", "\(uuid(4)) \(uuid(1)) c"])
            // owner_folder held text ('2'): it matched folder 2 as SQLite's foreign key does.
            #expect(
                try String.fetchAll(db, sql: "SELECT id || ' ' || folder || ' ' || ifnull(owner_folder, '-') FROM files ORDER BY rowid")
                    == ["\(uuid(5)) \(uuid(3)) \(uuid(2))", "\(uuid(6)) \(uuid(4)) -", "\(uuid(7)) \(uuid(1)) \(uuid(1))"])
            let sql = try #require(try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE name = 'files'"))
            #expect(sql.contains("STRICT") && sql.contains("DEFERRABLE INITIALLY DEFERRED") && sql.contains("ON UPDATE SET NULL"))
            #expect(!sql.uppercased().contains("AUTOINCREMENT"))
            #expect(try String.fetchAll(db, sql: "SELECT type FROM pragma_table_info('folders')") == ["TEXT", "TEXT", "TEXT"])
        }
        try queue.write { db throws in
            // STRICT still refuses a wrong type; the cascade through the self-reference works.
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO files (id, folder) VALUES (x'01', ?)", arguments: [uuid(1)])
            }
            try db.execute(sql: "DELETE FROM folders WHERE id = ?", arguments: [uuid(2)])
            #expect(try String.fetchAll(db, sql: "SELECT name FROM folders ORDER BY name") == ["c", "root"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM files") == 2)
        }
    }

    @Test func aWithoutRowidJoinTableThatIsNotListedFollows() throws {
        let queue = try migrate(
            """
            CREATE TABLE a (id INTEGER PRIMARY KEY);
            CREATE TABLE b (id INTEGER PRIMARY KEY);
            CREATE TABLE ab (aID INTEGER REFERENCES a ON DELETE CASCADE, bID INTEGER REFERENCES b ON DELETE CASCADE,
                weight REAL NOT NULL DEFAULT 1.5, PRIMARY KEY (aID, bID)) WITHOUT ROWID;
            INSERT INTO a VALUES (1), (2); INSERT INTO b VALUES (1), (2);
            INSERT INTO ab VALUES (1, 2, 0.5), (2, 1, 2.5), (2, 2, 1.5);
            """, tables: ["a", "b"])
        try queue.read { db throws in
            #expect(
                try String.fetchAll(db, sql: "SELECT aID || ' ' || bID || ' ' || weight FROM ab ORDER BY weight")
                    == ["\(uuid(1)) \(uuid(4)) 0.5", "\(uuid(2)) \(uuid(4)) 1.5", "\(uuid(2)) \(uuid(3)) 2.5"])
            #expect(try Int.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE name = 'ab'") == 1)
        }
    }

    @Test(arguments: [true, false]) func aRestrictSelfReferenceAndACycle(inMigrator: Bool) throws {
        let queue = try migrate(
            """
            CREATE TABLE nodes (id INTEGER PRIMARY KEY, up INTEGER REFERENCES nodes(id) ON DELETE RESTRICT, peer INTEGER REFERENCES peers);
            CREATE TABLE peers (id INTEGER PRIMARY KEY, node INTEGER REFERENCES nodes ON DELETE SET NULL);
            INSERT INTO nodes VALUES (1, NULL, NULL), (2, 1, NULL), (3, 2, NULL);
            INSERT INTO peers VALUES (1, 3), (2, 1);
            UPDATE nodes SET peer = 2 WHERE id = 1;
            CREATE INDEX nodes_up ON NODES (up);
            """, tables: ["nodes", "peers"], inMigrator: inMigrator)
        try queue.read { db throws in
            #expect(
                try String.fetchAll(db, sql: "SELECT id || ' ' || ifnull(up, '-') || ' ' || ifnull(peer, '-') FROM nodes ORDER BY rowid")
                    == ["\(uuid(1)) - \(uuid(5))", "\(uuid(2)) \(uuid(1)) -", "\(uuid(3)) \(uuid(2)) -"])
            #expect(try String.fetchAll(db, sql: "SELECT node FROM peers ORDER BY rowid") == [uuid(3), uuid(1)])
            #expect(try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL") == ["nodes_up"])
        }
    }

    @Test func aRestrictSelfReferenceWithForeignKeysEnforced() throws {
        // Outside the migrator, dropping the old table deletes its rows with foreign keys on:
        // a RESTRICT between two of them must not stop the migration.
        let queue = try migrate(
            """
            CREATE TABLE nodes (id INTEGER PRIMARY KEY, up INTEGER REFERENCES nodes(id) ON DELETE RESTRICT);
            CREATE TABLE leaves (id INTEGER PRIMARY KEY, node INTEGER NOT NULL REFERENCES nodes ON DELETE RESTRICT);
            INSERT INTO nodes VALUES (1, NULL), (2, 1), (3, 2);
            INSERT INTO leaves VALUES (1, 3), (2, 1);
            """, tables: ["nodes"])
        try queue.read { db throws in
            #expect(try String.fetchAll(db, sql: "SELECT ifnull(up, '-') FROM nodes ORDER BY rowid") == ["-", uuid(1), uuid(2)])
            #expect(try String.fetchAll(db, sql: "SELECT node FROM leaves ORDER BY id") == [uuid(3), uuid(1)])
        }
    }

    @Test func keysThatAreNotRowidAliasesAndHoldOddValues() throws {
        // INT PRIMARY KEY is not a rowid alias: its values can be text that looks like a number,
        // or NULL (which SQLite allows in such keys); every row gets its own UUID anyway.
        let queue = try migrate(
            """
            CREATE TABLE t (k INT PRIMARY KEY, v TEXT);
            CREATE TABLE c (id INTEGER PRIMARY KEY, tk INTEGER REFERENCES t(k));
            INSERT INTO t VALUES (5, 'five'), (NULL, 'null one'), (NULL, 'null two'), (-9223372036854775808, 'min');
            INSERT INTO c VALUES (1, 5), (2, '5'), (3, -9223372036854775808), (4, NULL);
            """, tables: ["t"])
        try queue.read { db throws in
            #expect(
                try String.fetchAll(db, sql: "SELECT k || ' ' || v FROM t ORDER BY rowid") == [
                    "\(uuid(1)) five", "\(uuid(2)) null one", "\(uuid(3)) null two", "\(uuid(4)) min",
                ])
            #expect(try String.fetchAll(db, sql: "SELECT ifnull(tk, '-') FROM c ORDER BY id") == [uuid(1), uuid(1), uuid(4), "-"])
        }
    }

    @Test func anEmptyTableAndTriggersOfOtherTablesThatMentionIt() throws {
        let queue = try migrate(
            """
            CREATE TABLE empty (id INTEGER PRIMARY KEY, n INTEGER);
            CREATE TABLE other (id INTEGER PRIMARY KEY, n INTEGER);
            CREATE TRIGGER other_insert AFTER INSERT ON other BEGIN INSERT INTO empty (id, n) VALUES (NEW.id || '-copy', NEW.n); END;
            CREATE VIEW both_ AS SELECT n FROM empty UNION ALL SELECT n FROM other;
            CREATE TEMP VIEW temp_view AS SELECT 1;
            """, tables: ["empty"])
        try queue.write { db throws in
            try db.execute(sql: "INSERT INTO other (id, n) VALUES (1, 42)")
            #expect(try String.fetchAll(db, sql: "SELECT id FROM empty") == ["1-copy"])
            #expect(try Int.fetchAll(db, sql: "SELECT n FROM both_") == [42, 42])
            #expect(try String.fetchOne(db, sql: "SELECT type FROM pragma_table_info('empty') WHERE pk = 1") == "TEXT")
        }
    }

    @Test func theConnectionsTemporaryViewsAndTriggersAreKept() throws {
        let queue = try DatabaseQueue()
        let uuids = SequentialUUIDs()
        try queue.write { db throws in
            try db.execute(
                sql: """
                    CREATE TABLE lists (id INTEGER PRIMARY KEY, title TEXT);
                    CREATE TABLE log (message TEXT);
                    INSERT INTO lists VALUES (7, 'a');
                    CREATE TEMP VIEW titles AS SELECT id, title FROM lists;
                    CREATE TEMPORARY TRIGGER logInsert AFTER INSERT ON main.lists BEGIN INSERT INTO log VALUES (NEW.title); END;
                    """)
            try db.migrateIntegerPrimaryKeysToUUIDs(tables: ["lists"], uuid: uuids.next)
            try db.execute(sql: "INSERT INTO lists VALUES ('b-id', 'b')")
            #expect(try String.fetchAll(db, sql: "SELECT id FROM titles ORDER BY title") == [uuid(1), "b-id"])
            #expect(try String.fetchAll(db, sql: "SELECT message FROM log") == ["b"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_temp_schema WHERE type IN ('view', 'trigger')") == 2)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_schema WHERE type IN ('view', 'trigger')") == 0)
        }
    }

    @Test func aTableWhoseColumnIsNamedRowidKeepsItsRowsInOrder() throws {
        let queue = try migrate(
            """
            CREATE TABLE t (id INTEGER PRIMARY KEY, rowid TEXT, oid TEXT);
            CREATE TABLE c (id INTEGER PRIMARY KEY, tID INTEGER REFERENCES t ON DELETE CASCADE);
            INSERT INTO t VALUES (3, 'a', 'b'), (1, 'c', 'd');
            INSERT INTO c VALUES (1, 3), (2, 1);
            """, tables: ["t"])
        try queue.read { db throws in
            #expect(try String.fetchAll(db, sql: "SELECT id || rowid || oid FROM t ORDER BY _rowid_") == ["\(uuid(1))cd", "\(uuid(2))ab"])
            #expect(try String.fetchAll(db, sql: "SELECT tID FROM c ORDER BY id") == [uuid(2), uuid(1)])
        }
    }
}
