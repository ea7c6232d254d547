import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// What a test needs from MockCloud beyond injecting faults: seeing and clearing them, changing
/// limits after creation, and draining the change log without a send.
@Suite(.timeLimit(.minutes(5))) struct MockCloudTestToolsTests {
    @Test func injectedFaultsCanBeInspectedAndCleared() async throws {
        let cloud = MockCloud()
        #expect(cloud.injectedFaults.isEmpty)
        cloud.failNextRequests(2, with: .quotaExceeded, operations: [.modifyRecords])
        cloud.loseNextResponses(1, operations: [.fetchAsset])
        cloud.reorderNextFetches(3)
        #expect(
            cloud.injectedFaults == [
                MockCloud.InjectedFault(kind: .fail(.quotaExceeded), operations: [.modifyRecords], remaining: 2),
                MockCloud.InjectedFault(kind: .loseResponse, operations: [.fetchAsset], remaining: 1),
                MockCloud.InjectedFault(kind: .reorder, operations: [.fetchZoneChanges], remaining: 3),
            ])
        // Unencrypted: the key zone's own requests would meet the fault first.
        let a = try await SyncTestDevice("a", cloud: cloud, encryption: .disabled)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        // The first modify meets the quota fault, which then has one use left.
        await #expect(throws: SyncEngineError.self) { try await a.engine.sendChanges() }
        #expect(
            cloud.injectedFaults.first == MockCloud.InjectedFault(kind: .fail(.quotaExceeded), operations: [.modifyRecords], remaining: 1))
        cloud.clearInjectedFaults()
        #expect(cloud.injectedFaults.isEmpty)
        try await a.engine.sendChanges()
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 1)
    }

    @Test func limitsChangeAfterCreation() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g0', 'first')")
        try await a.engine.sendChanges()
        #expect(cloud.limits.maximumItemsPerRequest == 400)
        cloud.limits.maximumItemsPerRequest = 3
        try await a.execute(
            "INSERT INTO games (id, title) VALUES " + (1...10).map { "('g\($0)', 't\($0)')" }.joined(separator: ", "))
        try await a.engine.sendChanges()
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 11)
        let before = cloud.requestCount(.modifyRecords)
        #expect(before >= 1 + 4, "ten records in requests of at most three")
        // A quota below what is stored refuses growth, and deletes still pass.
        cloud.limits.maximumBytesPerUser = 0
        try await a.execute("DELETE FROM games WHERE id = 'g1'")
        try await a.engine.sendChanges()
        try await a.execute("INSERT INTO games (id, title) VALUES ('g99', 'over')")
        let error = await #expect(throws: SyncEngineError.self) { try await a.engine.sendChanges() }
        #expect(error?.isQuotaExceeded == true)
    }

    @Test func theChangeLogDrainsWithoutASend() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        #expect(try await a.strings("SELECT CAST(count(*) AS TEXT) FROM strata_sync.metadata") == ["0"])
        try await a.engine.drainChangeLog()
        #expect(try await a.strings("SELECT recordName || ' ' || pendingOperation FROM strata_sync.metadata") == ["g1:games save"])
        #expect(cloud.requestCount(.modifyRecords) == 0)
        #expect(try await a.pending() == 1)
        try await a.engine.sendChanges()
        #expect(try await a.pending() == 0)
    }
}
