import Foundation
import StrataSQLite
import Testing

/// The statement cache finds the texts it saw last by where their bytes are, before hashing
/// them. A text must still only ever find its own statement: texts of one length built one
/// after another (whose freed bytes the allocator hands out again), texts that differ in one
/// byte, statements evicted, replaced or cleared while a recent text still names them.
@Suite(.timeLimit(.minutes(1)))
struct StatementCacheRecentTextTests {
    /// A text of a fixed length (longer than a `String` keeps inline) that selects `value`.
    static func selecting(_ value: Int) -> String {
        "SELECT '\(String(format: "%06d", value))' AS value -- text long enough for the heap"
    }

    @Test(arguments: [64, 8, 3, 1])
    func textsOfOneLengthBuiltOneAfterAnotherEachRunTheirOwnStatement(capacity: Int) async throws {
        var configuration = Configuration()
        configuration.statementCacheCapacity = capacity
        let queue = try DatabaseQueue(configuration: configuration)
        try await queue.write { db throws in
            for round in 0..<3_000 {
                // A few values again and again, each time in a new `String`: the cache and
                // its recent texts see fresh storage, often at an address just freed.
                let value = (round * 7) % 23
                let text = Self.selecting(value)
                #expect(text.utf8.count == Self.selecting(0).utf8.count)
                #expect(try String.fetchOne(db, sql: text) == String(format: "%06d", value), "round \(round)")
                try db.execute(sql: text)
            }
            #expect(db.cachedStatementCount <= capacity)
        }
    }

    @Test func textsDifferingInTheirLastByteFindTheirOwnStatements() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db throws in
            let base = "SELECT 'a long enough text to live on the heap' || "
            let texts = (0..<10).map { base + "'\($0)'" }
            for round in 0..<50 {
                for (index, text) in texts.enumerated() where (index + round) % 3 != 0 {
                    #expect(try String.fetchOne(db, sql: text) == "a long enough text to live on the heap\(index)")
                }
            }
        }
    }

    @Test func anEvictedStatementIsNotFoundThroughItsRecentText() async throws {
        var configuration = Configuration()
        configuration.statementCacheCapacity = 2
        let queue = try DatabaseQueue(configuration: configuration)
        try await queue.writeWithoutTransaction { db throws in
            db.clearStatementCache()
            let first = Self.selecting(1)
            let evicted = try db.cachedStatement(sql: first)
            #expect(try db.cachedStatement(sql: first) === evicted)
            _ = try db.cachedStatement(sql: Self.selecting(2))
            _ = try db.cachedStatement(sql: Self.selecting(3))
            #expect(db.cachedStatementCount == 2)
            let again = try db.cachedStatement(sql: first)
            #expect(again !== evicted)
            #expect(try String.fetchOne(db, sql: first) == "000001")
            #expect(try db.cachedStatement(sql: first) === again)
        }
    }

    @Test func aClearedCacheFindsNothingThroughRecentTexts() async throws {
        let queue = try DatabaseQueue()
        try await queue.writeWithoutTransaction { db throws in
            let text = Self.selecting(5)
            let before = try db.cachedStatement(sql: text)
            #expect(try db.cachedStatement(sql: text) === before)
            db.clearStatementCache()
            #expect(db.cachedStatementCount == 0)
            let after = try db.cachedStatement(sql: text)
            #expect(after !== before)
            #expect(db.cachedStatementCount == 1)
        }
    }

    /// A cached statement still stepped by a cursor is replaced when the same text is executed
    /// meanwhile; the text then finds the replacement, not the statement the cursor holds.
    @Test func aReplacedStatementIsNotFoundThroughItsRecentText() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db throws in
            try db.execute(sql: "CREATE TABLE t (x INTEGER)")
            for x in 1...3 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [x]) }
            let text = "SELECT x FROM t ORDER BY x -- a text long enough for the heap"
            let cursor = try Int.fetchCursor(db, sql: text)
            let held = try db.cachedStatement(sql: text)
            #expect(try cursor.next() != nil)
            try db.execute(sql: text)
            let replacement = try db.cachedStatement(sql: text)
            #expect(replacement !== held)
            #expect(try db.cachedStatement(sql: text) === replacement)
            while try cursor.next() != nil {}
            #expect(try Int.fetchAll(db, sql: text) == [1, 2, 3])
        }
    }
}
