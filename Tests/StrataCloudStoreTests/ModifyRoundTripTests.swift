import Logging
import PostgresNIO
import StrataCloud
import Synchronization
import Testing

@testable import StrataCloudStore

/// Round trips to PostgreSQL are most of a push's time in the service (Performance.md,
/// eighteenth round): each statement of a modify is one, counted here as the statements sent
/// on the store's only connection. A count, not a time: it does not vary with the machine.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct ModifyRoundTripTests {
    /// `BEGIN`, the role, the zone's lock, the zone's shape (named records, tombstones,
    /// parents named only as parents, share roots), the write with the zone's position,
    /// the quota and hint, `COMMIT`.
    static let modifyOfSaves = 7

    @Test func aPushOfOneNewRecordIsSevenRoundTrips() async throws {
        let counted = try await CountedStore()
        defer { counted.stop() }
        let zone = try await counted.zone()
        let trips = try await counted.roundTrips {
            try await counted.database.modifyRecords(
                saving: [CloudRecord(id: CloudRecordID(name: "new", zone: zone), type: "games")], deleting: [])
        }
        #expect(trips == Self.modifyOfSaves)
    }

    /// A child saved without its parent (which the zone holds) names the parent only as a
    /// parent: read in the shape's statement, not in one of its own. The parent that gained
    /// children gets a new tag, in one statement for all of them.
    @Test func childrenOfAStoredParentAreEightRoundTrips() async throws {
        let counted = try await CountedStore()
        defer { counted.stop() }
        let zone = try await counted.zone()
        let parent = CloudRecordID(name: "parent", zone: zone)
        _ = try await counted.database.modifyRecords(saving: [CloudRecord(id: parent, type: "folders")], deleting: [])
        let children = (0..<3).map { CloudRecord(id: CloudRecordID(name: "child\($0)", zone: zone), type: "notes", parent: parent) }
        let trips = try await counted.roundTrips {
            try await counted.database.modifyRecords(saving: children, deleting: [])
        }
        #expect(trips == Self.modifyOfSaves + 1)
    }

    /// In a zone with a share, its root, who sees it and which shares the user may write are
    /// read in the shape's statement too; a save of a record that already exists (a new
    /// version, with its tag) costs the same.
    @Test func anEditInASharedZoneIsSevenRoundTrips() async throws {
        let counted = try await CountedStore()
        defer { counted.stop() }
        let zone = try await counted.zone()
        let root = CloudRecordID(name: "root", zone: zone)
        let saved = try await counted.database.modifyRecords(saving: [CloudRecord(id: root, type: "games")], deleting: [])
        var share = CloudShare(rootRecordID: root, title: "games")
        share.participants.append(CloudShare.Participant(user: counted.fixture.user("bob"), permission: .readWrite))
        _ = try await counted.database.saveShare(share)
        var edited = try #require(saved.saveResults[root]).get()
        edited.fields["score"] = .integer(3)
        let trips = try await counted.roundTrips {
            try await counted.database.modifyRecords(saving: [edited], deleting: [])
        }
        #expect(trips == Self.modifyOfSaves)
    }
}

/// A store over a client of one connection whose server messages are counted.
private struct CountedStore {
    let fixture: StoreFixture
    let database: CloudStoreDatabase
    private let counter = StatementCounter()
    private let client: PostgresClient
    private let runner: Task<Void, Never>
    private let owner = "alice"

    init() async throws {
        fixture = try await StoreFixture()
        let counter = self.counter
        var logger = Logger(label: "strata.cloud.store.tests.round-trips") { _ in counter }
        logger.logLevel = .trace
        var configuration = try TestPostgres.configuration()
        // One connection: every statement, and every prepared statement's preparation, on it.
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = 1
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let client = self.client
        runner = Task { await client.run() }
        database = CloudStore(client: client, logger: fixture.logger).privateDatabase(of: fixture.user(owner))
    }

    /// The owner's zone, with one record saved through the counted connection: its statements
    /// are prepared before anything is counted.
    func zone() async throws -> CloudZoneID {
        let zone = fixture.zone("games", of: owner)
        try await database.saveZones([zone])
        _ = try await database.modifyRecords(
            saving: [CloudRecord(id: CloudRecordID(name: "warm-up", zone: zone), type: "games")], deleting: [])
        return zone
    }

    /// How many round trips `work` made: the statements sent meanwhile.
    func roundTrips(_ work: () async throws -> CloudModifyResult) async throws -> Int {
        let before = counter.count.withLock { $0 }
        let result = try await work()
        for outcome in result.saveResults.values { _ = try outcome.get() }
        return counter.count.withLock { $0 } - before
    }

    func stop() {
        runner.cancel()
        fixture.stop()
    }
}

/// Counts the statements PostgresNIO sends, from its trace of each action its connection
/// runs: one round trip each (a statement's preparation included). Counted as sent, not as
/// answered: a query's result completes before the server's `ReadyForQuery` arrives, so a
/// count of those raced with the test's reading of it.
private final class StatementCounter: LogHandler, @unchecked Sendable {
    // The handler's own settings are set once, before the logger is shared.
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    let count = Mutex(0)

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    private static let roundTrips = ["sendParseDescribeBindExecuteSync(", "sendBindExecuteSync(", "sendParseDescribeSync("]

    func log(event: LogEvent) {
        guard event.message.description == "Run action",
            event.metadata?.values.contains(where: { value in
                let action = value.description.drop { $0 == "." }
                return Self.roundTrips.contains { action.hasPrefix($0) }
            }) == true
        else { return }
        count.withLock { $0 += 1 }
    }
}
