import Foundation
import PostgresNIO
import Synchronization
import Testing

@testable import StrataCloudStore

/// Migrating is safe when several databases of one cluster migrate at once — the test suites
/// do exactly that, one database per test.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct CloudStoreMigrationTests {
    /// Roles belong to the cluster while the migration lock belongs to a database, so two
    /// databases can both find the request role missing. Staged here: A creates the role and
    /// holds its transaction open, B tries the same and waits on A's uncommitted row; when A
    /// commits, B must not fail with unique_violation.
    @Test func twoMigrationsCreatingTheRequestRoleAtOnceBothSucceed() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let role = "strata_race_\(UInt32.random(in: 0...UInt32.max))"
        let createRole = try #require(CloudStoreMigrations.version1.first)
            .replacingOccurrences(of: CloudStoreMigrations.requestRole, with: role)
        #expect(createRole.contains("CREATE ROLE \(role)"))
        let client = fixture.client

        let (aCreated, aCreatedSignal) = AsyncStream<Void>.makeStream()
        let (aReleased, releaseA) = AsyncStream<Void>.makeStream()
        let migrationA = Task { @Sendable in
            try await client.withTransaction(logger: fixture.logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: createRole), logger: fixture.logger)
                aCreatedSignal.yield()
                for await _ in aReleased { break }
            }
        }
        for await _ in aCreated { break }

        let (bStarted, bStartedSignal) = AsyncStream<Int32>.makeStream()
        let migrationB = Task { @Sendable in
            try await client.withTransaction(logger: fixture.logger) { connection in
                for try await pid in try await connection.query("SELECT pg_backend_pid()", logger: fixture.logger).decode(Int32.self) {
                    bStartedSignal.yield(pid)
                }
                try await connection.query(PostgresQuery(unsafeSQL: createRole), logger: fixture.logger)
            }
        }
        var bPID: Int32?
        for await pid in bStarted { bPID = pid; break }
        try await fixture.waitUntilSessionWaitsForALock(try #require(bPID))

        releaseA.yield()
        try await migrationA.value
        await #expect(throws: Never.self) { try await migrationB.value }

        try await client.query(PostgresQuery(unsafeSQL: "DROP ROLE IF EXISTS \(role)"), logger: fixture.logger)
    }
}
