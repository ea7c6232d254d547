import StrataSQLite
import StrataSync
import Testing

/// The rules a synced schema must follow, each refused with a typed error naming the table.
@Suite(.timeLimit(.minutes(5))) struct SyncSchemaTests {
    func error(_ sql: String, tables: [String]) throws -> SyncSchemaError? {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: sql) }
        return try queue.read { db in
            do {
                _ = try SyncSchema.read(tables: tables, in: db)
                return nil
            } catch let error as SyncSchemaError {
                return error
            }
        }
    }

    @Test func parentsComeFirst() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE players (id TEXT PRIMARY KEY, gameID TEXT REFERENCES games(id) ON DELETE CASCADE);
                    CREATE TABLE games (id TEXT PRIMARY KEY);
                    """)
        }
        let schema = try queue.read { db in try SyncSchema.read(tables: ["players", "games"], in: db) }
        #expect(schema.tables.map(\.name) == ["games", "players"])
        #expect(schema.table(named: "players")?.parent?.parentTable == "games")
    }

    @Test func everyRuleIsCheckedWithATypedError() throws {
        #expect(try error("CREATE TABLE t (id TEXT PRIMARY KEY)", tables: ["missing"]) == .tableNotFound("missing"))
        #expect(try error("CREATE TABLE \"a:b\" (id TEXT PRIMARY KEY)", tables: ["a:b"]) == .colonInTableName("a:b"))
        #expect(
            try error("CREATE TABLE t (id INTEGER PRIMARY KEY)", tables: ["t"])
                == .primaryKeyNotText(table: "t", column: "id", declaredType: "INTEGER"))
        #expect(
            try error("CREATE TABLE t (a TEXT, b TEXT, PRIMARY KEY (a, b))", tables: ["t"])
                == .primaryKeyNotSingleColumn(table: "t", columns: ["a", "b"]))
        #expect(
            try error("CREATE TABLE t (id TEXT PRIMARY KEY, email TEXT UNIQUE)", tables: ["t"])
                == .uniqueConstraint(table: "t", index: "sqlite_autoindex_t_2", columns: ["email"]))
        #expect(
            try error(
                """
                CREATE TABLE p (id TEXT PRIMARY KEY);
                CREATE TABLE c (id TEXT PRIMARY KEY, pID TEXT REFERENCES p(id) ON DELETE RESTRICT);
                """, tables: ["p", "c"]) == .unsupportedOnDelete(table: "c", column: "pID", action: "RESTRICT"))
        #expect(
            try error(
                """
                CREATE TABLE p (id TEXT PRIMARY KEY);
                CREATE TABLE c (id TEXT PRIMARY KEY, pID TEXT REFERENCES p(id) ON DELETE CASCADE);
                """, tables: ["c"]) == .referencesUnsyncedTable(table: "c", parentTable: "p"))
        #expect(
            try error(
                """
                CREATE TABLE a (id TEXT PRIMARY KEY, bID TEXT REFERENCES b(id) ON DELETE SET NULL);
                CREATE TABLE b (id TEXT PRIMARY KEY, aID TEXT REFERENCES a(id) ON DELETE SET NULL);
                """, tables: ["a", "b"]) == .foreignKeyCycle(["a", "b", "a"]))
        #expect(
            try error("CREATE TABLE t (id TEXT PRIMARY KEY, strata_sync_x TEXT)", tables: ["t"])
                == .reservedColumnName(table: "t", column: "strata_sync_x"))
    }

    @Test func errorsSayWhatToChange() {
        let message = SyncSchemaError.unsupportedOnDelete(table: "players", column: "gameID", action: "RESTRICT").description
        #expect(message.contains("players") && message.contains("gameID") && message.contains("CASCADE"))
    }
}
