import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

/// Every send failure retrying cannot fix reaches the caller as one `SyncEngineError` naming
/// the records, whether the cloud refused the records one by one or the whole request; a full
/// quota shows on the status and reaches the delegate.
@Suite(.timeLimit(.minutes(5))) struct SendFailureShapeTests {
    final class RecordingDelegate: SyncEngineDelegate {
        let failures = Mutex<[SyncEngineError]>([])
        func syncEngine(_ engine: SyncEngine, accountChanged change: SyncAccountChange) async {}
        func syncEngine(_ engine: SyncEngine, sendFailed error: SyncEngineError) async {
            failures.withLock { $0.append(error) }
        }
    }

    func device(_ cloud: MockCloud, delegate: RecordingDelegate) async throws -> (DatabaseQueue, SyncEngine) {
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let engine = try await runOnBackgroundThread {
            try SyncEngine(
                for: database, tableNames: SyncTestDevice.tableNames, container: cloud.container(user: "alice"),
                configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil), delegate: delegate, startImmediately: false)
        }
        return (database, engine)
    }

    @Test func aFullQuotaNamesTheRecordsShowsOnTheStatusAndReachesTheDelegate() async throws {
        let cloud = MockCloud()
        let delegate = RecordingDelegate()
        let (database, engine) = try await device(cloud, delegate: delegate)
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker')") }
        try await engine.sendChanges()
        // The quota shrinks after creation to what the user already stores.
        cloud.limits.maximumBytesPerUser = 1
        try await database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g2', 'Chess'), ('g3', 'Go')")
        }
        let error = await #expect(throws: SyncEngineError.self) { try await engine.sendChanges() }
        #expect(error == .sendFailed(["g2:games": .quotaExceeded, "g3:games": .quotaExceeded]))
        #expect(error?.isQuotaExceeded == true)
        #expect(engine.status.isOverQuota)
        #expect((engine.status.lastError as? SyncEngineError) == error)
        #expect(delegate.failures.withLock { $0 } == [error].compactMap { $0 })
        #expect(try await engine.pendingCount() == 2, "nothing is lost")

        // Space freed: the next send goes through and the state clears.
        cloud.limits.maximumBytesPerUser = nil
        try await engine.sendChanges()
        #expect(!engine.status.isOverQuota)
        #expect(engine.status.lastError == nil)
        #expect(try await engine.pendingCount() == 0)
        #expect(delegate.failures.withLock { $0.count } == 1)
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 3)
    }

    @Test(arguments: [CloudError.quotaExceeded, .permissionFailure(nil), .limitExceeded])
    func aWholeRequestRefusedForGoodHasTheShapeOfRecordsRefused(_ refusal: CloudError) async throws {
        let cloud = MockCloud()
        let delegate = RecordingDelegate()
        let (database, engine) = try await device(cloud, delegate: delegate)
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker')") }
        cloud.failNextRequests(1, with: refusal, operations: [.modifyRecords])
        await #expect(throws: SyncEngineError.sendFailed(["g1:games": refusal])) { try await engine.sendChanges() }
        #expect(engine.status.isOverQuota == (refusal == .quotaExceeded))
        #expect(delegate.failures.withLock { $0 } == [.sendFailed(["g1:games": refusal])])
        try await engine.sendChanges()
        #expect(try await engine.pendingCount() == 0)
    }

    @Test(arguments: [CloudError.networkFailure, .serviceUnavailable(retryAfter: nil), .requestRateLimited(retryAfter: .seconds(1))])
    func aTransientFailureStaysACloudErrorAndDoesNotReachTheDelegate(_ failure: CloudError) async throws {
        let cloud = MockCloud()
        let delegate = RecordingDelegate()
        let (database, engine) = try await device(cloud, delegate: delegate)
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker')") }
        cloud.failNextRequests(1, with: failure, operations: [.modifyRecords])
        await #expect(throws: failure) { try await engine.sendChanges() }
        #expect(!engine.status.isOverQuota)
        #expect(delegate.failures.withLock { $0.isEmpty })
    }

    /// A delegate's writes are the app's: captured and sent, though the engine calls it.
    final class WritingDelegate: SyncEngineDelegate {
        let database: DatabaseQueue
        init(database: DatabaseQueue) { self.database = database }
        func syncEngine(_ engine: SyncEngine, accountChanged change: SyncAccountChange) async {}
        func syncEngine(_ engine: SyncEngine, sendFailed error: SyncEngineError) async {
            try? await database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('note', 'storage full')") }
        }
    }

    @Test func whatTheDelegateWritesIsCapturedAsTheAppsOwn() async throws {
        let cloud = MockCloud()
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let delegate = WritingDelegate(database: database)
        let engine = try await runOnBackgroundThread {
            try SyncEngine(
                for: database, tableNames: SyncTestDevice.tableNames, container: cloud.container(user: "alice"),
                configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil), delegate: delegate, startImmediately: false)
        }
        try await database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker')") }
        cloud.failNextRequests(1, with: .quotaExceeded, operations: [.modifyRecords])
        await #expect(throws: SyncEngineError.self) { try await engine.sendChanges() }
        #expect(try await engine.pendingCount() == 2)
        try await engine.sendChanges()
        #expect(
            cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).map(\.id.name).sorted() == ["g1:games", "note:games"])
    }
}
