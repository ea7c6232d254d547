import Foundation
import StrataSQLite
import StrataSync
import Testing

/// Every schema the UUID key migration refuses, each with a typed error naming the table and
/// column or row, and with nothing changed.
@Suite(.timeLimit(.minutes(5))) struct UUIDKeyMigrationErrorTests {
    /// The error migrating `tables` of `schema` throws, after checking the schema and data did
    /// not change.
    func error(_ schema: String, tables: [String], foreignKeys: Bool = true) throws -> UUIDKeyMigrationError? {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = foreignKeys
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: schema)
            try db.execute(sql: "PRAGMA foreign_keys = \(foreignKeys ? "ON" : "OFF")")
        }
        func state(_ db: Database) throws -> [String] {
            let objects = try String.fetchAll(
                db, sql: "SELECT type || ' ' || name || ' ' || ifnull(sql, '') FROM sqlite_schema ORDER BY name")
            var rows: [String] = []
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") {
                rows += try String.fetchAll(db, sql: "SELECT '\(table): ' || count(*) FROM \(table.quotedIdentifier)")
            }
            return objects + rows
        }
        let before = try queue.read(state)
        do {
            _ = try queue.write { db in try db.migrateIntegerPrimaryKeysToUUIDs(tables: tables) }
            return nil
        } catch let error as UUIDKeyMigrationError {
            #expect(try queue.read(state) == before)
            return error
        }
    }

    @Test func tablesThatCannotBeMigrated() throws {
        #expect(try error("CREATE TABLE t (id INTEGER PRIMARY KEY)", tables: ["missing"]) == .tableNotFound("missing"))
        #expect(
            try error("CREATE TABLE t (id INTEGER PRIMARY KEY); CREATE VIEW v AS SELECT * FROM t", tables: ["v"])
                == .notAnOrdinaryTable("v"))
        #expect(try error("CREATE VIRTUAL TABLE f USING fts5(body)", tables: ["f"]) == .notAnOrdinaryTable("f"))
        #expect(
            try error("CREATE TABLE strata_things (id INTEGER PRIMARY KEY)", tables: ["strata_things"])
                == .reservedTableName("strata_things"))
        #expect(try error("CREATE TABLE t (id INTEGER PRIMARY KEY)", tables: ["t", "T"]) == .tableListedTwice("T"))
        #expect(try error("CREATE TABLE t (id INTEGER PRIMARY KEY, x) WITHOUT ROWID", tables: ["t"]) == .withoutRowID("t"))
        #expect(try error("CREATE TABLE t (x INTEGER)", tables: ["t"]) == .primaryKeyNotSingleColumn(table: "t", columns: []))
        #expect(
            try error("CREATE TABLE t (a INTEGER, b INTEGER, PRIMARY KEY (a, b))", tables: ["t"])
                == .primaryKeyNotSingleColumn(table: "t", columns: ["a", "b"]))
        #expect(
            try error("CREATE TABLE t (code REAL PRIMARY KEY)", tables: ["t"])
                == .primaryKeyNotInteger(table: "t", column: "code", declaredType: "REAL"))
        #expect(
            try error("CREATE TABLE t (code PRIMARY KEY)", tables: ["t"])
                == .primaryKeyNotInteger(table: "t", column: "code", declaredType: ""))
        #expect(
            try error("CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL)", tables: ["t"]) == .primaryKeyAlreadyText(table: "t", column: "id"))
        #expect(try error("CREATE TABLE t (id VARCHAR(36) PRIMARY KEY)", tables: ["t"]) == .primaryKeyAlreadyText(table: "t", column: "id"))
        #expect(
            try error("CREATE TABLE t (rowid INTEGER, _rowid_ INTEGER, oid INTEGER, id INT PRIMARY KEY)", tables: ["t"])
                == .unsupportedSchema(table: "t", reason: "its columns named rowid, _rowid_ and oid leave no way to read its rows' ids"))
    }

    @Test func referencesThatCannotFollow() throws {
        #expect(
            try error(
                """
                CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE);
                CREATE TABLE profiles (id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE, bio TEXT);
                """, tables: ["users", "profiles"]) == .primaryKeyIsForeignKey(table: "profiles", column: "id", parentTable: "users"))
        #expect(
            try error(
                """
                CREATE TABLE users (id INTEGER PRIMARY KEY, email TEXT UNIQUE);
                CREATE TABLE logins (id INTEGER PRIMARY KEY, email TEXT REFERENCES users(email));
                """, tables: ["users"])
                == .foreignKeyToNonKeyColumn(table: "logins", column: "email", parentTable: "users", parentColumn: "email"))
        #expect(
            try error(
                """
                CREATE TABLE users (id INTEGER PRIMARY KEY, version INTEGER, UNIQUE (id, version));
                CREATE TABLE events (id INTEGER PRIMARY KEY, userID INTEGER, userVersion INTEGER,
                    FOREIGN KEY (userID, userVersion) REFERENCES users (id, version));
                """, tables: ["users"]) == .compositeForeignKey(table: "events", columns: ["userID", "userVersion"], parentTable: "users"))
    }

    @Test func aDanglingReferenceIsNamedByTableRowAndColumn() throws {
        // Written while foreign keys were off: reminder 2 points at list 99, which never existed.
        let schema = """
            PRAGMA foreign_keys = OFF;
            CREATE TABLE lists (id INTEGER PRIMARY KEY);
            CREATE TABLE reminders (id INTEGER PRIMARY KEY, title TEXT, listID INTEGER REFERENCES lists(id));
            INSERT INTO lists VALUES (1);
            INSERT INTO reminders VALUES (1, 'a', 1), (2, 'b', 99), (3, 'c', NULL);
            """
        for foreignKeys in [true, false] {
            #expect(
                try error(schema, tables: ["lists", "reminders"], foreignKeys: foreignKeys)
                    == .foreignKeyViolation(table: "reminders", rowID: 2, column: "listID", parentTable: "lists"))
        }
    }

    @Test func errorsNameTheTableAndColumn() {
        let cases: [(UUIDKeyMigrationError, [String])] = [
            (.tableNotFound("lists"), ["lists"]),
            (.withoutRowID("tags"), ["tags", "WITHOUT ROWID"]),
            (.primaryKeyAlreadyText(table: "lists", column: "id"), ["lists", "id", "TEXT"]),
            (.compositeForeignKey(table: "events", columns: ["a", "b"], parentTable: "users"), ["events", "a, b", "users"]),
            (
                .foreignKeyToNonKeyColumn(table: "logins", column: "email", parentTable: "users", parentColumn: "email"),
                ["logins", "users", "email"]
            ),
            (
                .foreignKeyViolation(table: "reminders", rowID: 2, column: "listID", parentTable: "lists"),
                ["reminders", "row 2", "listID", "lists"]
            ),
        ]
        for (error, words) in cases {
            for word in words { #expect(error.description.contains(word), "\(error.description) lacks \(word)") }
        }
    }
}
