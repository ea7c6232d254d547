import StrataSQLite
import Testing

@Test(.timeLimit(.minutes(5))) func opensAnInMemoryQueue() throws {
    let queue = try DatabaseQueue()
    #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT 1 + 1") } == 2)
}
