import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct TraceTests {
    @Test func traceReportsExpandedSQL() throws {
        let queue = try DatabaseQueue(
            configuration: {
                var c = Configuration(); c.label = "traced"; return c
            }())
        let events = Recorder<TraceEvent>()
        try queue.writeWithoutTransaction { db throws in
            try db.execute(sql: "CREATE TABLE t (id INTEGER, name TEXT, data BLOB)")
            db.trace { events.append($0) }
            try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?)", arguments: [1, "O'Hara", Data([0xAB])])
            _ = try String.fetchOne(db, sql: "SELECT name FROM t WHERE id = ?", arguments: [1])
            db.trace(nil)
            try db.execute(sql: "DELETE FROM t")
        }
        let traced = events.elements
        #expect(traced.map(\.sql) == ["INSERT INTO t VALUES (?, ?, ?)", "SELECT name FROM t WHERE id = ?"])
        #expect(traced.map(\.expandedSQL) == ["INSERT INTO t VALUES (1, 'O''Hara', x'ab')", "SELECT name FROM t WHERE id = 1"])
        #expect(traced.allSatisfy { !$0.isTrigger })
        #expect(traced.first?.connection == "traced.queue")
        #expect(traced.first?.description == "INSERT INTO t VALUES (1, 'O''Hara', x'ab')")
    }

    func traceTriggeredInsert(includingTriggers: Bool) throws -> [TraceEvent] {
        let queue = try DatabaseQueue()
        let events = Recorder<TraceEvent>()
        try queue.writeWithoutTransaction { db throws in
            try db.execute(
                sql: """
                    CREATE TABLE items (name TEXT);
                    CREATE TABLE log (message TEXT);
                    CREATE TRIGGER items_log AFTER INSERT ON items BEGIN
                        INSERT INTO log VALUES ('inserted ' || NEW.name);
                    END;
                    """)
            db.trace(includingTriggers: includingTriggers) { events.append($0) }
            try db.execute(sql: "INSERT INTO items VALUES (?)", arguments: ["pen"])
            db.trace(nil)
            #expect(try String.fetchOne(db, sql: "SELECT message FROM log") == "inserted pen")
        }
        return events.elements
    }

    @Test func triggerLinesAreDroppedByDefault() throws {
        let events = try traceTriggeredInsert(includingTriggers: false)
        #expect(events.map(\.expandedSQL) == ["INSERT INTO items VALUES ('pen')"])
    }

    @Test func triggerLinesAreIncludedOnRequest() throws {
        let events = try traceTriggeredInsert(includingTriggers: true)
        // SQLite reports the trigger's start and each statement it runs as `--` lines.
        #expect(
            events.map(\.sql) == [
                "INSERT INTO items VALUES (?)",
                "-- TRIGGER items_log",
                "-- INSERT INTO log VALUES ('inserted ' || NEW.name)",
            ])
        #expect(events.map(\.isTrigger) == [false, true, true])
        #expect(events.dropFirst().allSatisfy { $0.expandedSQL == $0.sql })
    }

    @Test func traceInPrepareDatabaseSeesEveryPoolConnection() throws {
        try withTemporaryDatabasePath { path in
            let events = Recorder<String>()
            var configuration = Configuration()
            configuration.label = "app"
            configuration.prepareDatabase { db in
                db.trace { event in
                    if event.sql.contains("marker") { events.append("\(event.connection): \(event.expandedSQL)") }
                }
            }
            let pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in try db.execute(sql: "CREATE TABLE marker (x); INSERT INTO marker VALUES (1)") }
            _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT x FROM marker WHERE x = ?", arguments: [1]) }
            #expect(events.elements.contains("app.writer: INSERT INTO marker VALUES (1)"))
            #expect(events.elements.contains("app.reader1: SELECT x FROM marker WHERE x = 1"))
        }
    }

    @Test func replacingATraceStopsTheFirstOne() throws {
        let queue = try DatabaseQueue()
        let first = Recorder<String>()
        let second = Recorder<String>()
        try queue.writeWithoutTransaction { db throws in
            db.trace { first.append($0.sql) }
            _ = try Int.fetchOne(db, sql: "SELECT 1")
            db.trace { second.append($0.sql) }
            _ = try Int.fetchOne(db, sql: "SELECT 2")
            db.trace(nil)
        }
        #expect(first.elements == ["SELECT 1"])
        #expect(second.elements == ["SELECT 2"])
    }
}
