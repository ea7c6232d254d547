import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct AttachTests {
    @Test func attachQueryAcrossSchemasAndDetach() throws {
        try withTemporaryDatabasePath { otherPath in
            let other = try DatabaseQueue(path: otherPath)
            try other.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE scores (playerID INTEGER, points INTEGER);
                        INSERT INTO scores VALUES (1, 10), (1, 5), (2, 7);
                        """)
            }
            other.close()

            let queue = try DatabaseQueue()
            try queue.writeWithoutTransaction { db throws in
                try db.execute(
                    sql: """
                        CREATE TABLE players (id INTEGER PRIMARY KEY, name TEXT);
                        INSERT INTO players VALUES (1, 'Ann'), (2, 'Bob');
                        """)
                try db.attach(path: otherPath, as: "stats")
                #expect(try db.schemaNames() == ["main", "stats"])
                let totals = try db.fetchAll(
                    sql: """
                        SELECT p.name, SUM(s.points) FROM main.players p
                        JOIN stats.scores s ON s.playerID = p.id
                        GROUP BY p.id ORDER BY p.id
                        """
                ) { row in "\(try row[0] as String)=\(try row[1] as Int)" }
                #expect(totals == ["Ann=15", "Bob=7"])
                // Writes through the attached schema reach the file.
                try db.execute(sql: "INSERT INTO stats.scores VALUES (?, ?)", arguments: [2, 1])
                try db.detach("stats")
                #expect(try db.schemaNames() == ["main"])
                let error = #expect(throws: DatabaseError.self) { try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM stats.scores") }
                #expect(error?.message.contains("no such table: stats.scores") == true)
            }
            let reopened = try DatabaseQueue(path: otherPath)
            #expect(try reopened.read { db in try Int.fetchOne(db, sql: "SELECT SUM(points) FROM scores") } == 23)
        }
    }

    /// SQLite 3.40 accepts ATTACH inside a transaction, but refuses to DETACH a schema the
    /// transaction has used.
    @Test func detachOfASchemaInUseInsideATransactionFails() throws {
        try withTemporaryDatabasePath { otherPath in
            let queue = try DatabaseQueue()
            let error = #expect(throws: DatabaseError.self) {
                try queue.write { db in
                    try db.attach(path: otherPath, as: "other")
                    try db.execute(sql: "CREATE TABLE other.t (x)")
                    try db.detach("other")
                }
            }
            #expect(error?.message.contains("database other is locked") == true)
            // ATTACH is not transactional: the schema stays attached, but the write was rolled
            // back, so other.t was not created; outside the transaction DETACH works.
            try queue.writeWithoutTransaction { db throws in
                #expect(try db.schemaNames() == ["main", "other"])
                #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM other.sqlite_schema") == 0)
                try db.detach("other")
            }
        }
    }

    @Test func schemaNameIsQuoted() throws {
        try withTemporaryDatabasePath { otherPath in
            let queue = try DatabaseQueue()
            try queue.writeWithoutTransaction { db throws in
                try db.attach(path: otherPath, as: "odd name")
                try db.execute(sql: "CREATE TABLE \"odd name\".t (x); INSERT INTO \"odd name\".t VALUES (1)")
                #expect(try Int.fetchOne(db, sql: "SELECT x FROM \"odd name\".t") == 1)
                try db.detach("odd name")
            }
        }
    }

    @Test func attachInPrepareDatabaseReachesPoolReaders() throws {
        try withTemporaryDatabasePath { mainPath in
            try withTemporaryDatabasePath { otherPath in
                let other = try DatabaseQueue(path: otherPath)
                try other.write { db in try db.execute(sql: "CREATE TABLE meta (key TEXT, value TEXT); INSERT INTO meta VALUES ('v', '1')")
                }
                other.close()
                var configuration = Configuration()
                configuration.prepareDatabase { db in try db.attach(path: otherPath, as: "sync") }
                let pool = try DatabasePool(path: mainPath, configuration: configuration)
                #expect(try pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync.meta WHERE key = 'v'") } == "1")
                try pool.write { db in try db.execute(sql: "UPDATE sync.meta SET value = '2'") }
                #expect(try pool.read { db in try String.fetchOne(db, sql: "SELECT value FROM sync.meta") } == "2")
            }
        }
    }
}
