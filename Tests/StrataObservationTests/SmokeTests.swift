import Testing
import StrataSQLite

@Test func opensAnInMemoryQueue() throws {
    let queue = try DatabaseQueue()
    #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT 1 + 1") } == 2)
}
