import Dispatch
import StrataObservation
import StrataSQLite
import StrataTestSupport
import Testing

/// Cancelling the consumer of an observation interrupts the fetch it is running, so the fetch
/// gives its reader back at once (issue #24, item 7).
@Suite(.timeLimit(.minutes(5))) struct ObservationCancellationTests {
    /// Runs for minutes unless interrupted; `started()` signals when it runs.
    static let longQuery = """
        WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000)
        SELECT COUNT(*) FROM c
        """

    /// One reader, `started()` installed, and the observation tests' schema.
    static func makePool(signalling started: DispatchSemaphore, inlineBudget: Duration = .microseconds(100)) throws -> TemporaryPool {
        var configuration = Configuration()
        configuration.maximumReaderCount = 1
        configuration.inlineObservationBudget = inlineBudget
        configuration.prepareDatabase { db in
            try db.add(
                function: DatabaseFunction("started") { () -> Int in
                    started.signal()
                    return 1
                })
        }
        return try makeGamesPool(configuration: configuration)
    }

    /// Runs `body`; when the test is cancelled meanwhile (its time limit reached, the fetch
    /// still running), interrupts `pool` so that a failing run ends instead of counting on.
    static func interruptingOnTimeout<T: Sendable>(_ pool: DatabasePool, _ body: () async throws -> T) async throws -> T {
        try await withTaskCancellationHandler {
            try await body()
        } onCancel: {
            pool.interrupt()
        }
    }

    @Test(.timeLimit(.minutes(1)))
    func cancellingTheConsumerInterruptsTheFirstFetch() async throws {
        let started = DispatchSemaphore(value: 0)
        let database = try Self.makePool(signalling: started)
        let pool = database.pool
        let consumer = Task {
            var iterator = observe(in: pool) { db in try Int.fetchOne(db, sql: Self.longQuery) }.makeAsyncIterator()
            return try await iterator.next()
        }
        // The first fetch runs on the only reader.
        #expect(await wait(for: started))
        consumer.cancel()
        _ = await consumer.result
        // The fetch was interrupted and gave the reader back.
        let count = try await Self.interruptingOnTimeout(pool) {
            try await pool.read { db in try Player.fetchCount(db) }
        }
        #expect(count == 0)
    }

    /// A re-fetch handed to the reader's queue (`asyncRead`: budget zero) and one run inline on
    /// the committing thread (`readAfterCommit`: a budget no fetch exceeds).
    @Test(.timeLimit(.minutes(1)), arguments: [Duration.zero, .seconds(60)])
    func cancellingTheConsumerInterruptsARefetch(inlineBudget: Duration) async throws {
        let started = DispatchSemaphore(value: 0)
        let database = try Self.makePool(signalling: started, inlineBudget: inlineBudget)
        let pool = database.pool
        let slow = SharedFlag()
        let firstValue = DispatchSemaphore(value: 0)
        let consumer = Task {
            var iterator = observe(in: pool) { db -> Int? in
                // Reads players, so that an insert triggers a re-fetch; once armed, counts on.
                let count = try Player.fetchCount(db)
                if slow.value.load(ordering: .acquiring) {
                    return try Int.fetchOne(db, sql: Self.longQuery)
                }
                return count
            }.makeAsyncIterator()
            _ = try await iterator.next()
            firstValue.signal()
            while try await iterator.next() != nil {}
        }
        #expect(await wait(for: firstValue))
        slow.value.store(true, ordering: .releasing)
        // The commit's re-fetch runs the long query: inline, on the committing thread inside
        // the write, or on the only reader after it.
        let write = Task { try await pool.write { db in try Player(id: 1, name: "Blob").insert(db) } }
        #expect(await wait(for: started))
        consumer.cancel()
        _ = await consumer.result
        // An inline re-fetch held the write; either kind held the only reader.
        let count = try await Self.interruptingOnTimeout(pool) {
            try await write.value
            return try await pool.read { db in try Player.fetchCount(db) }
        }
        #expect(count == 1)
    }
}
