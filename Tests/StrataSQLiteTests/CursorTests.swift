import Foundation
import StrataSQLite
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(5))) struct CursorTests {
    /// Counts how many rows SQLite has produced, through a function called once per row.
    final class RowCounter: Sendable {
        let count = Atomic<Int>(0)
        func function() -> DatabaseFunction {
            DatabaseFunction("counted", argumentCount: 1) { values in
                self.count.add(1, ordering: .relaxed)
                return values[0]
            }
        }
    }

    let manyRowsSQL = """
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000)
        SELECT counted(x) FROM c
        """

    @Test func cursorIsLazy() throws {
        let counter = RowCounter()
        let queue = try DatabaseQueue()
        let firstTen = try queue.writeWithoutTransaction { db in
            try db.add(function: counter.function())
            let cursor = try Int.fetchCursor(db, sql: manyRowsSQL)
            var values: [Int] = []
            while values.count < 10, let value = try cursor.next() { values.append(value) }
            return values
        }
        #expect(firstTen == Array(1...10))
        // A million-row query, but only the rows asked for were produced.
        #expect(counter.count.load(ordering: .relaxed) <= 11)
    }

    @Test func cursorIteratesManyRows() throws {
        let queue = try DatabaseQueue()
        let (count, sum) = try queue.write { db in
            try db.execute(sql: "CREATE TABLE numbers (n INTEGER)")
            try db.execute(
                sql: """
                    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000)
                    INSERT INTO numbers SELECT x FROM c
                    """)
            let cursor = try Int.fetchCursor(db, sql: "SELECT n FROM numbers ORDER BY n")
            var count = 0
            var sum = 0
            try cursor.forEach {
                count += 1; sum += $0
            }
            // Exhausted: stays at the end.
            #expect(try cursor.next() == nil)
            return (count, sum)
        }
        #expect(count == 100_000)
        #expect(sum == 100_000 * 100_001 / 2)
    }

    @Test func cursorCollectsTheRest() throws {
        let queue = try DatabaseQueue()
        let (first, rest) = try queue.read { db in
            let cursor = try Int.fetchCursor(db, sql: "SELECT value FROM json_each('[1,2,3,4]')")
            let first = try cursor.next()
            return (first, try cursor.collect())
        }
        #expect(first == 1)
        #expect(rest == [2, 3, 4])
    }

    @Test func cursorWithArgumentsAndRecords() throws {
        let queue = try makeRecordQueue()
        let names = try queue.write { db in
            for index in 0..<20 { try Player(name: "p\(index)", score: index).insert(db) }
            return try Player.fetchCursor(db, sql: "SELECT * FROM players WHERE score >= ? ORDER BY score", arguments: [17]).collect().map(
                \.name)
        }
        #expect(names == ["p17", "p18", "p19"])
    }

    @Test func cursorReportsDecodingErrorsAndStops() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            let cursor = try Int.fetchCursor(db, sql: "SELECT value FROM json_each('[1,\"two\",3]')")
            #expect(try cursor.next() == 1)
            let error = #expect(throws: RowDecodingError.self) { try cursor.next() }
            #expect(error?.columnIndex == 0)
            #expect(try cursor.next() == nil)
            // The statement was reset and is usable again.
            #expect(try Int.fetchAll(db, sql: "SELECT value FROM json_each('[1,\"two\",3]') WHERE type = 'integer'") == [1, 3])
        }
    }

    @Test func cursorWithWrongArgumentsThrowsAtCreation() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(throws: DatabaseError.self) { try Int.fetchCursor(db, sql: "SELECT ?", arguments: []) }
            // The statement is not left busy.
            #expect(try Int.fetchOne(db, sql: "SELECT ?", arguments: [5]) == 5)
        }
    }

    @Test func abandonedCursorReleasesItsStatement() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            let sql = "SELECT value FROM json_each('[1,2,3]')"
            do {
                let cursor = try Int.fetchCursor(db, sql: sql)
                #expect(try cursor.next() == 1)
            }
            let statement = try db.cachedStatement(sql: sql)
            #expect(try Int.fetchAll(db, sql: sql) == [1, 2, 3])
            #expect(try db.cachedStatement(sql: sql) === statement)
        }
    }

    @Test func fetchAllFetchOneAndFetchCount() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(sql: "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (3), (1), (2)")
            #expect(try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") == [1, 2, 3])
            #expect(try Int.fetchAll(db, sql: "SELECT x FROM t WHERE x > 5") == [])
            #expect(try Int.fetchOne(db, sql: "SELECT x FROM t ORDER BY x DESC") == 3)
            #expect(try db.fetchCount(sql: "SELECT * FROM t WHERE x >= ?", arguments: [2]) == 2)
            #expect(try db.fetchCount("SELECT * FROM t WHERE x < \(3)") == 2)
            let pairs = try db.fetchAll(sql: "SELECT x, x * 10 FROM t ORDER BY x") { row in (try row[0] as Int, try row[1] as Int) }
            #expect(pairs.map(\.1) == [10, 20, 30])
        }
    }
}
