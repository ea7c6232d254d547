import CSQLite
import StrataSQLite
import Testing

/// Strata turns SQLite's memory statistics off before its first connection opens: the
/// process-wide mutex they take on every allocation was a tenth of the CPU time of inserts.
@Suite(.timeLimit(.minutes(1))) struct SQLiteLibraryTests {
    @Test func memoryStatisticsAreOffOnceADatabaseIsOpen() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE t (x TEXT)")
            for index in 0..<100 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [String(repeating: "x", count: index * 10)]) }
        }
        // Nothing in this test process touches SQLite before Strata does.
        #expect(SQLiteLibrary.tookSettings)
        #expect(!SQLiteLibrary.keepsMemoryStatistics)
        // With the statistics off, SQLite reports no memory in use, though it holds some.
        #expect(sqlite3_memory_used() == 0)
        let count = try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        #expect(count == 100)
    }
}
