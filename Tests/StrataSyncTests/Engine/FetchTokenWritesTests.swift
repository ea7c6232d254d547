import StrataQueries
import StrataSQLite
import StrataSyncTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// A fetch saves the tokens of its databases and of its zones' last pages in one transaction
/// at its end (issue #27): a push's fetch wrote its page, then its zone's token, then each
/// database's token, an fsync each. What it fetched before a failure stays fetched.
@Suite(.timeLimit(.minutes(3)))
struct FetchTokenWritesTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// Counts the transactions of one connection that changed rows, those of `WITHOUT ROWID`
    /// tables included (SQLite's update hook leaves them out, its change counter does not).
    final class WritingTransactions: TransactionListener, Sendable {
        let count = Atomic<Int>(0)
        private let changesAtLastEnd = Atomic<Int>(0)
        var observesRowChanges: Bool { false }

        func transactionDidCommit(_ db: Database) {
            let total = db.totalChangesCount
            if total > changesAtLastEnd.exchange(total, ordering: .relaxed) { count.add(1, ordering: .relaxed) }
        }

        func transactionDidRollback(_ db: Database) { startCounting(db) }

        /// Counts from now on.
        func startCounting(_ db: Database) { changesAtLastEnd.store(db.totalChangesCount, ordering: .relaxed) }
    }

    @Test(arguments: [(rows: 1, pageSize: 200), (rows: 5, pageSize: 2), (rows: 4, pageSize: 2)])
    func aFetchWritesEachPageThenTheTokensOnce(rows: Int, pageSize: Int) async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud, fetchPageSize: pageSize)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g0', 'before')")
        try await a.sync(to: b)
        let writes = WritingTransactions()
        try await b.database.write { db in
            db.add(transactionListener: writes)
            writes.startCounting(db)
        }
        for index in 1...rows { try await a.execute("INSERT INTO games (id, title) VALUES ('g\(index)', 'new')") }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        let pages = (rows + pageSize - 1) / pageSize
        // Each page, each page's token but the last's, then the tokens.
        #expect(writes.count.load(ordering: .relaxed) == 2 * pages)
        #expect(try await b.rows() == a.rows())
        // Fetching again finds nothing and writes nothing.
        try await b.engine.fetchChanges()
        #expect(writes.count.load(ordering: .relaxed) == 2 * pages)
    }

    /// The zone is fetched whole, then the shares of its shared roots cannot be read: the
    /// fetch fails, and the zone's token is saved all the same.
    @Test func aFetchThatFailsAfterAZoneCameWholeKeepsThatZonesToken() async throws {
        let cloud = MockCloud()
        let a1 = try await SyncTestDevice("a1", cloud: cloud, user: "alice")
        let a2 = try await SyncTestDevice("a2", cloud: cloud, user: "alice")
        let b = try await SyncTestDevice("b", cloud: cloud, user: "bob")
        // Sharing needs running engines; without a schedule they sync only when told.
        for device in [a1, a2, b] { device.engine.start() }
        try await a1.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a1.engine.sendChanges()
        try await a1.engine.share(record: SharedGame(id: "g1", title: "Poker")) { share in
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
        }
        try await a1.sync(to: a2)
        try await a2.execute("INSERT INTO games (id, title) VALUES ('g2', 'Chess')")
        try await a2.engine.sendChanges()
        cloud.failNextRequests(1, with: .networkFailure, operations: [.fetchShare])
        await #expect(throws: CloudError.networkFailure) { try await a1.engine.fetchChanges() }
        #expect(cloud.injectedFaults.isEmpty)
        #expect(try await a1.rows() == a2.rows())
        let latest = try await cloud.container(user: "alice").privateDatabase.fetchZoneChanges(Self.zone, since: nil, limit: 1_000)
        let saved = try await a1.database.read { db in try EngineState.value(EngineState.zoneToken(Self.zone), in: db) }
        #expect(saved == latest.token.value)
        try await a1.engine.fetchChanges()
        #expect(try await a1.rows() == a2.rows())
    }
}
