import NIOCore
import PostgresNIO
import Synchronization
import Testing

@testable import StrataCloudStore

/// A store transaction runs on the event loop of the connection it holds
/// (`EventLoopTaskExecutor`), so its statements' answers resume it without a hand-over to
/// another thread; the caller gets its answer back on its own executor.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(1)))
struct TransactionExecutorTests {
    @Test func aTransactionsWorkRunsOnItsConnectionsEventLoop() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let user = fixture.user("alice")
        for repeatableRead in [false, true] {
            let (loop, onLoop) = try await fixture.store.transaction(as: user, repeatableRead: repeatableRead) {
                connection -> (any EventLoop, [Bool]) in
                var onLoop = [connection.eventLoop.inEventLoop]
                for try await value in try await connection.query("SELECT 1", logger: fixture.logger).decode(Int.self) {
                    #expect(value == 1)
                    onLoop.append(connection.eventLoop.inEventLoop)
                }
                onLoop.append(connection.eventLoop.inEventLoop)
                // Child tasks inherit the preference.
                async let child = connection.eventLoop.inEventLoop
                onLoop.append(await child)
                return (connection.eventLoop, onLoop)
            }
            #expect(onLoop == [true, true, true, true], "repeatable read: \(repeatableRead)")
            // The preference ends with the transaction.
            #expect(!loop.inEventLoop)
        }
    }

    @Test func aFailedTransactionRollsBackAndItsConnectionServesTheNext() async throws {
        struct Refused: Error {}
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let user = fixture.user("alice")
        let zone = fixture.zone("games", of: "alice")
        await #expect(throws: Refused.self) {
            try await fixture.store.transaction(as: user) { connection in
                try await connection.perform(
                    "INSERT INTO strata_cloud.users (name) VALUES (\(user)) ON CONFLICT DO NOTHING", logger: fixture.logger)
                throw Refused()
            }
        }
        let users = try await fixture.store.transaction(as: user) { connection in
            var count = 0
            for try await _ in try await connection.query("SELECT 1 FROM strata_cloud.users WHERE name = \(user)", logger: fixture.logger) {
                count += 1
            }
            return count
        }
        #expect(users == 0)
        try await fixture.database("alice").saveZones([zone])
        #expect(try await fixture.database("alice").fetchDatabaseChanges(since: nil).changedZones.contains(zone))
    }
}
