import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// DROP statements and full-table deletes really take effect on writer connections (whose
/// authorizer turns off the truncate optimization).
@Suite(.timeLimit(.minutes(5))) struct SchemaChangeTests {
    func objectNames(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name")
    }

    @Test func dropStatementsRemoveTheirObjects() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, x);
                    CREATE INDEX t_x ON t(x);
                    CREATE VIEW v AS SELECT x FROM t;
                    CREATE TRIGGER t_ai AFTER INSERT ON t BEGIN SELECT 1; END;
                    CREATE TABLE other (y);
                    INSERT INTO t (x) VALUES (1);
                    """)
            #expect(try objectNames(db) == ["other", "t", "t_ai", "t_x", "v"])
            try db.execute(sql: "DROP TRIGGER t_ai")
            try db.execute(sql: "DROP INDEX t_x")
            try db.execute(sql: "DROP VIEW v")
            #expect(try objectNames(db) == ["other", "t"])
            try db.execute(sql: "DROP TABLE t")
            #expect(try objectNames(db) == ["other"])
            // A table of the same name can be created again, and emptied with a plain DELETE.
            try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3)")
            try db.execute(sql: "DELETE FROM t")
            #expect(db.changesCount == 3)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") == 0)
            try db.execute(sql: "DROP TABLE IF EXISTS t; DROP TABLE IF EXISTS missing")
            #expect(try objectNames(db) == ["other"])
        }
    }

    @Test func dropTempObjects() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.execute(sql: "CREATE TEMP TABLE scratch (x); CREATE TEMP VIEW scratch_view AS SELECT x FROM scratch")
            try db.execute(sql: "DROP VIEW scratch_view; DROP TABLE scratch")
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM temp.sqlite_schema") == 0)
        }
    }

    @Test func dropOnAPoolWriterAndRebuildInAMigration() throws {
        try withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            try pool.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT);
                        INSERT INTO teams VALUES (1, 'Red');
                        CREATE TABLE new_teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '');
                        INSERT INTO new_teams SELECT id, name FROM teams;
                        DROP TABLE teams;
                        ALTER TABLE new_teams RENAME TO teams;
                        """)
            }
            #expect(try pool.read { db in try String.fetchAll(db, sql: "SELECT name FROM teams") } == ["Red"])
            #expect(try pool.read { db in try db.tableExists("new_teams") } == false)
            try pool.write { db in try db.execute(sql: "DELETE FROM teams") }
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM teams") } == 0)
        }
    }
}
