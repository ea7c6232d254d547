import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// Signing out or switching accounts goes to the delegate; without one, local data goes.
@Suite(.timeLimit(.minutes(5))) struct AccountChangeTests {
    final class RecordingDelegate: SyncEngineDelegate {
        let changes = Mutex<[SyncAccountChange]>([])
        func syncEngine(_ engine: SyncEngine, accountChanged change: SyncAccountChange) async {
            changes.withLock { $0.append(change) }
        }
    }

    @Test func signingOutDeletesLocalDataByDefault() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        cloud.setAccountStatus(.noAccount, for: "alice")
        await #expect(throws: SyncEngineError.accountUnavailable(.noAccount)) { try await a.engine.syncChanges() }
        #expect(try await a.rows() == [])
        #expect(try await a.pending() == 0)
        // Signing in again brings the data back from the cloud.
        cloud.setAccountStatus(.available, for: "alice")
        try await a.engine.syncChanges()
        #expect(try await a.rows() == ["game g1 'Poker' NULL"])
    }

    @Test func aDelegateDecidesInstead() async throws {
        let cloud = MockCloud()
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let delegate = RecordingDelegate()
        let engine = try SyncEngine(
            for: database, tableNames: ["games", "players"], container: cloud.container(user: "alice"),
            configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil), delegate: delegate, startImmediately: false)
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id) VALUES ('g1')") }
        try await engine.syncChanges()
        cloud.setAccountStatus(.noAccount, for: "alice")
        await #expect(throws: SyncEngineError.accountUnavailable(.noAccount)) { try await engine.syncChanges() }
        #expect(delegate.changes.withLock { $0 } == [.signedOut(previousUser: "alice")])
        #expect(try await database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM games") } == 1)
    }
}
