import CSQLite
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct StatementCacheTests {
    func runCount(_ statement: Statement) -> Int32 {
        sqlite3_stmt_status(statement.handle, SQLITE_STMTSTATUS_RUN, 0)
    }

    @Test func repeatedSQLReusesTheCachedStatement() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(sql: "CREATE TABLE t (x)")
            let sql = "SELECT COUNT(*) FROM t WHERE x > ?"
            let before = db.cachedStatementCount
            _ = try Int.fetchOne(db, sql: sql, arguments: [0])
            let statement = try db.cachedStatement(sql: sql)
            #expect(db.cachedStatementCount == before + 1)
            for value in 1...5 {
                _ = try Int.fetchOne(db, sql: sql, arguments: [value])
            }
            // Same object, run six times, and no new cache entry.
            #expect(try db.cachedStatement(sql: sql) === statement)
            #expect(runCount(statement) == 6)
            #expect(db.cachedStatementCount == before + 1)
        }
    }

    @Test func repeatedExecuteReusesTheCachedStatement() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(sql: "CREATE TABLE t (x)")
            let sql = "INSERT INTO t VALUES (?)"
            try db.execute(sql: sql, arguments: [1])
            let statement = try db.cachedStatement(sql: sql)
            try db.execute(sql: sql, arguments: [2])
            try db.execute(sql: sql, arguments: [3])
            #expect(try db.cachedStatement(sql: sql) === statement)
            #expect(runCount(statement) == 3)
            #expect(try Int.fetchAll(db, sql: "SELECT x FROM t ORDER BY x") == [1, 2, 3])
        }
    }

    @Test func multiStatementSQLIsNotCached() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            let before = db.cachedStatementCount
            try db.execute(sql: "CREATE TABLE a (x); CREATE TABLE b (y)")
            #expect(db.cachedStatementCount == before)
        }
    }

    @Test func evictsLeastRecentlyUsedBeyondCapacity() throws {
        var configuration = Configuration()
        configuration.statementCacheCapacity = 3
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.writeWithoutTransaction { db throws in
            db.clearStatementCache()
            let evictionsBefore = db.statementCacheEvictionCount
            let a = try db.cachedStatement(sql: "SELECT 1")
            _ = try db.cachedStatement(sql: "SELECT 2")
            _ = try db.cachedStatement(sql: "SELECT 3")
            #expect(db.cachedStatementCount == 3)
            #expect(db.statementCacheEvictionCount == evictionsBefore)
            // Touch "SELECT 1" so "SELECT 2" becomes the least recently used.
            #expect(try Int.fetchOne(db, sql: "SELECT 1") == 1)
            _ = try db.cachedStatement(sql: "SELECT 4")
            #expect(db.cachedStatementCount == 3)
            #expect(db.statementCacheEvictionCount == evictionsBefore + 1)
            #expect(try db.cachedStatement(sql: "SELECT 1") === a)
            // Ten more distinct statements: the cache stays at capacity.
            for n in 10..<20 {
                #expect(try Int.fetchOne(db, sql: "SELECT \(n)") == n)
            }
            #expect(db.cachedStatementCount == 3)
            #expect(db.statementCacheEvictionCount == evictionsBefore + 11)
            // An evicted statement is prepared again when needed.
            #expect(try Int.fetchOne(db, sql: "SELECT 2") == 2)
        }
    }

    @Test func zeroCapacityCachesNothing() throws {
        var configuration = Configuration()
        configuration.statementCacheCapacity = 0
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.write { db throws in
            _ = try Int.fetchOne(db, sql: "SELECT 1")
            try db.execute(sql: "CREATE TABLE t (x)")
            #expect(db.cachedStatementCount == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT 1") == 1)
        }
    }

    @Test func clearStatementCacheEmptiesIt() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            _ = try Int.fetchOne(db, sql: "SELECT 1")
            #expect(db.cachedStatementCount > 0)
            db.clearStatementCache()
            #expect(db.cachedStatementCount == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT 1") == 1)
        }
    }

    @Test func nestedFetchOfTheSameSQLWhileACursorStepsIt() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(sql: "CREATE TABLE t (x INTEGER)")
            for x in 1...4 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [x]) }
            let sql = "SELECT x FROM t ORDER BY x"
            let cursor = try Int.fetchCursor(db, sql: sql)
            var outer: [Int] = []
            while let x = try cursor.next() {
                outer.append(x)
                // The cached statement is busy: the nested fetch gets a fresh one and sees
                // every row, and the cursor keeps its position.
                #expect(try Int.fetchAll(db, sql: sql) == [1, 2, 3, 4])
                #expect(try Int.fetchOne(db, sql: sql) == 1)
            }
            #expect(outer == [1, 2, 3, 4])
            // After the cursor finished the cached statement is usable again.
            #expect(try Int.fetchAll(db, sql: sql) == [1, 2, 3, 4])
        }
    }

    @Test func nestedFetchInsideFetchAllClosure() throws {
        let queue = try DatabaseQueue()
        let pairs = try queue.read { db throws in
            return try db.fetchAll(sql: "WITH g(value) AS (VALUES (1), (2), (3)) SELECT value FROM g") { row throws in
                let value: Int = try row[0]
                let inner = try Int.fetchAll(db, sql: "WITH g(value) AS (VALUES (1), (2), (3)) SELECT value FROM g")
                return (value, inner.count)
            }
        }
        #expect(pairs.map(\.0) == [1, 2, 3])
        #expect(pairs.map(\.1) == [3, 3, 3])
    }

    @Test func evictionNeverFinalizesABusyStatement() throws {
        var configuration = Configuration()
        configuration.statementCacheCapacity = 1
        let queue = try DatabaseQueue(configuration: configuration)
        try queue.read { db throws in
            let sql = "WITH g(v) AS (VALUES (1), (2), (3)) SELECT v FROM g"
            let cursor = try Int.fetchCursor(db, sql: sql)
            #expect(try cursor.next() == 1)
            // Other statements churn through the one-slot cache while the cursor is open.
            for n in 0..<5 { #expect(try Int.fetchOne(db, sql: "SELECT \(n)") == n) }
            #expect(try cursor.next() == 2)
            #expect(try cursor.next() == 3)
            #expect(try cursor.next() == nil)
        }
    }

    /// Texts Swift's `String` takes for equal, but SQLite reads differently: the literal is
    /// one scalar in one and a letter plus a combining accent in the other.
    @Test func canonicallyEquivalentTextsAreDifferentStatements() async throws {
        let queue = try DatabaseQueue()
        try await queue.read { db throws in
            let composed = "SELECT '\u{E9}'"
            let decomposed = "SELECT 'e\u{301}'"
            #expect(composed == decomposed)
            #expect(try String.fetchOne(db, sql: composed)?.unicodeScalars.count == 1)
            #expect(try String.fetchOne(db, sql: decomposed)?.unicodeScalars.count == 2)
            #expect(try db.cachedStatement(sql: composed) !== db.cachedStatement(sql: decomposed))
        }
    }

    /// The key hashes a sample of a long text's bytes: texts of one length that differ only
    /// between the sampled bytes, at every position, are still told apart.
    @Test func longTextsDifferingAnywhereAreDifferentStatements() async throws {
        let queue = try DatabaseQueue()
        try await queue.read { db throws in
            let padding = String(repeating: " ", count: 300)
            for length in [95, 96, 97, 300] {
                let stem = String(padding.prefix(length))
                for position in [0, 1, 31, 32, 33, length / 2, length / 2 + 1, length - 33, length - 32, length - 1] {
                    // One digit at `position` inside a comment, the value selected after it.
                    var characters = Array(stem)
                    characters[position] = "7"
                    let text = "SELECT \(position) /*" + String(characters) + "*/"
                    #expect(try Int.fetchOne(db, sql: text) == position, "length \(length), position \(position)")
                }
            }
            var seen: Set<ObjectIdentifier> = []
            for position in 40..<60 {
                var characters = Array(padding)
                characters[position] = "x"
                let statement = try db.cachedStatement(sql: "SELECT \(position % 10) /*" + String(characters) + "*/")
                seen.insert(ObjectIdentifier(statement))
            }
            #expect(seen.count == 20)
        }
    }
}
