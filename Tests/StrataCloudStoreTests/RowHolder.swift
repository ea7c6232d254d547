import Foundation
import Logging
import PostgresNIO
import Testing

/// A session of its own holding rows locked until released: a request that needs them waits
/// where the test wants it.
struct RowHolder {
    let pid: Int32
    let task: Task<Void, any Error>
    let releaser: AsyncStream<Void>.Continuation

    static func hold(_ query: PostgresQuery, in fixture: StoreFixture) async throws -> RowHolder {
        try await hold(query, through: fixture.client, logger: fixture.logger)
    }

    /// ``hold(_:in:)`` on any client (one of a database of the test's own).
    static func hold(_ query: PostgresQuery, through client: PostgresClient, logger: Logger) async throws -> RowHolder {
        let (locked, lockedNow) = AsyncStream<Int32>.makeStream()
        let (released, releaser) = AsyncStream<Void>.makeStream()
        let task = Task {
            defer { lockedNow.finish() }
            try await client.withConnection { connection in
                try await connection.query("BEGIN", logger: logger)
                var pid: Int32 = 0
                for try await id in try await connection.query("SELECT pg_backend_pid()", logger: logger).decode(Int32.self) {
                    pid = id
                }
                for try await _ in try await connection.query(query, logger: logger) {}
                lockedNow.yield(pid)
                for await _ in released { break }
                try await connection.query("COMMIT", logger: logger)
            }
        }
        for await pid in locked { return RowHolder(pid: pid, task: task, releaser: releaser) }
        try await task.value
        throw HolderFailure()
    }

    struct HolderFailure: Error {}

    /// The server session waiting for a lock this holder holds, once there is one.
    func waiter(in fixture: StoreFixture) async throws -> Int32? {
        for _ in 0..<10_000 {
            for try await waiting in try await fixture.client.query(
                "SELECT pid FROM pg_locks WHERE NOT granted AND \(pid) = ANY(pg_blocking_pids(pid)) LIMIT 1", logger: fixture.logger
            ).decode(Int32.self) {
                return waiting
            }
            await Task.yield()
        }
        Issue.record("nobody ever waited for session \(pid)'s rows")
        return nil
    }

    /// Returns once some session waits for a lock this holder holds.
    func waitUntilSomeoneWaits(in fixture: StoreFixture) async throws {
        try await waitUntilSomeoneWaits(through: fixture.client, logger: fixture.logger)
    }

    /// ``waitUntilSomeoneWaits(in:)`` asked through any client of the server.
    func waitUntilSomeoneWaits(through client: PostgresClient, logger: Logger) async throws {
        for _ in 0..<10_000 {
            for try await waiting in try await client.query(
                "SELECT count(*) FROM pg_locks WHERE NOT granted AND \(pid) = ANY(pg_blocking_pids(pid))", logger: logger
            ).decode(Int64.self) where waiting > 0 {
                return
            }
            await Task.yield()
        }
        Issue.record("nobody ever waited for session \(pid)'s rows")
    }

    func release() {
        releaser.yield()
        releaser.finish()
    }
}
