import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// A send on a short change log (a push) drains it in the transaction that checks the log,
/// and its entries leave the log only in the send's clean-up, after the request. These check
/// the commits a push makes before its request, that entries drained but still in the log
/// are never applied twice (a send failing at its request, a lost answer, a new engine), and
/// the drain's limit ±1, past which the log drains in several transactions first.
@Suite(.timeLimit(.minutes(3)))
struct ShortLogSendTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// What the first modify request saw of the phone: its commits since `commitsBefore`, the
    /// log's entries, and the log entries not drained yet.
    final class FirstRequest: Sendable {
        let commitsBefore = Atomic<UInt64>(0)
        let commits = Mutex<UInt64?>(nil)
        let logEntries = Mutex<Int?>(nil)
        let undrained = Mutex<Int?>(nil)
        let requests = Atomic<Int>(0)
    }

    static func phone(
        cloud: MockCloud, seen: FirstRequest, failFirst: CloudError? = nil
    ) async throws -> SyncTestDevice {
        let box = Mutex<SyncTestDevice?>(nil)
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let number = seen.requests.add(1, ordering: .sequentiallyConsistent).newValue
            if number == 1, let phone = box.withLock({ $0 }) {
                let commits = phone.database.changeHub.commitCount - seen.commitsBefore.load(ordering: .sequentiallyConsistent)
                seen.commits.withLock { $0 = commits }
                let (entries, undrained) = try await phone.database.read { db in
                    (try Self.logEntries(in: db), try ChangeLogDrain.undrainedCount(in: db))
                }
                seen.logEntries.withLock { $0 = entries }
                seen.undrained.withLock { $0 = undrained }
                if let failFirst { throw failFirst }
            }
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        let phone = try await SyncTestDevice("phone", container: container, encryption: .disabled)
        box.withLock { $0 = phone }
        return phone
    }

    static func logEntries(in db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM main.\(ChangeLog.tableName)") ?? 0
    }

    static func pendingRevisions(_ phone: SyncTestDevice) async throws -> [Int64] {
        try await phone.database.read { db in
            try Int64.fetchAll(
                db, sql: "SELECT pendingRevision FROM \(MetadatabaseTable.metadata.qualifiedName) ORDER BY recordType, recordPrimaryKey")
        }
    }

    /// One, three and ten rows in one transaction, and rows in two: the push commits once
    /// before its request (the drain), plus the batch's own access; every entry is drained by
    /// then and still in the log; after the send only the last entry stays.
    @Test(arguments: [[1], [3], [10], [1, 1], [2, 5]])
    func aPushDrainsInOneTransactionBeforeItsRequest(transactions: [Int]) async throws {
        let cloud = MockCloud()
        let seen = FirstRequest()
        let phone = try await Self.phone(cloud: cloud, seen: seen)
        try await phone.engine.sendChanges()  // the zone, made once
        var written = 0
        for (index, size) in transactions.enumerated() {
            let sql = (0..<size).map { "INSERT INTO games (id, title) VALUES ('g\(index)-\($0)', 'T');" }.joined()
            try await phone.database.write { db in try db.execute(sql: sql) }
            written += size
        }
        seen.requests.store(0, ordering: .sequentiallyConsistent)
        seen.commitsBefore.store(phone.database.changeHub.commitCount, ordering: .sequentiallyConsistent)
        try await phone.engine.sendChanges()
        // The drain (the batch's access reads, and may commit too): the old path committed a
        // check, the drain and the log's clean-up before building the batch.
        let commits = try #require(seen.commits.withLock { $0 })
        #expect(commits <= 2, "\(commits) commits before the request")
        #expect(seen.undrained.withLock { $0 } == 0)
        // Drained, and not removed before the request: the clean-up removes them after it.
        #expect(try #require(seen.logEntries.withLock { $0 }) >= written)
        #expect(try await phone.database.read { db in try Self.logEntries(in: db) } == 1)
        #expect(cloud.records(in: Self.zone).count == written)
        #expect(try await phone.pending() == 0)
    }

    /// A push whose request fails (before reaching the cloud, or with its answer lost after
    /// the cloud saved it) leaves its drained entries in the log; the next send, by the same
    /// engine or a new one over the same files, does not drain them again: each record was
    /// changed once, so its revision is 1, and the cloud ends with the phone's rows.
    @Test(arguments: [false, true], [false, true])
    func drainedEntriesLeftInTheLogAreNotAppliedTwice(lostAnswer: Bool, newEngine: Bool) async throws {
        let cloud = MockCloud()
        let seen = FirstRequest()
        let phone = try await Self.phone(cloud: cloud, seen: seen)
        try await phone.engine.sendChanges()
        try await phone.database.write { db in
            try db.execute(
                sql: "INSERT INTO games (id, title) VALUES ('g1', 'A'), ('g2', 'B'); INSERT INTO players VALUES ('p1', 'g1', 'P')")
        }
        seen.requests.store(0, ordering: .sequentiallyConsistent)
        if lostAnswer {
            cloud.loseNextResponses(1, operations: [.modifyRecords])
        } else {
            cloud.failNextRequests(1, with: .networkFailure, operations: [.modifyRecords])
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        #expect(try await phone.database.read { db in try Self.logEntries(in: db) } >= 3)
        #expect(try await phone.database.read { db in try ChangeLogDrain.undrainedCount(in: db) } == 0)
        #expect(try await Self.pendingRevisions(phone) == [1, 1, 1])
        let sender: SyncTestDevice
        if newEngine {
            sender = try await SyncTestDevice(
                "phone", container: cloud.container(user: "alice"), schema: "", database: phone.database, encryption: .disabled)
        } else {
            sender = phone
        }
        try await sender.engine.sendChanges()
        #expect(try await sender.pending() == 0)
        #expect(try await sender.database.read { db in try Self.logEntries(in: db) } == 1)
        #expect(Set(cloud.records(in: Self.zone).map(\.id.name)) == ["g1:games", "g2:games", "p1:players"])
        let fresh = try await SyncTestDevice("tablet", cloud: cloud, encryption: .disabled)
        try await fresh.engine.fetchChanges()
        #expect(try await fresh.rows() == sender.rows())
    }

    /// A log the send does not drain as it goes (a record named twice) at the drain's limit
    /// ±1: up to the limit it drains in the first transaction; one more drains in a second;
    /// every record arrives with its last values either way.
    @Test(arguments: [ChangeLogDrain.batchSize - 1, ChangeLogDrain.batchSize, ChangeLogDrain.batchSize + 1])
    func aLogAtTheDrainsLimitDrainsWhole(entries: Int) async throws {
        let cloud = MockCloud()
        let seen = FirstRequest()
        let phone = try await Self.phone(cloud: cloud, seen: seen)
        try await phone.engine.sendChanges()
        // `entries - 1` inserts, then an edit of the first row: a record named twice.
        try await phone.database.write { db in
            for index in 0..<(entries - 1) {
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 'T')", arguments: ["g\(index)"])
            }
            try db.execute(sql: "UPDATE games SET title = 'edited' WHERE id = 'g0'")
        }
        seen.requests.store(0, ordering: .sequentiallyConsistent)
        seen.commitsBefore.store(phone.database.changeHub.commitCount, ordering: .sequentiallyConsistent)
        try await phone.engine.sendChanges()
        #expect(seen.undrained.withLock { $0 } == 0)
        // The drain, the first batch, and the batch built behind it while the first request
        // travels, which may or may not have committed when the request is seen; past the
        // limit, the drain's second transaction and the one that finds the log drained come
        // first (the path before this change took those three for any log).
        let commits = try #require(seen.commits.withLock { $0 })
        if entries <= ChangeLogDrain.batchSize {
            #expect(commits <= 3, "\(commits) commits before the request")
        } else {
            #expect(commits >= 4, "\(commits) commits before the request")
        }
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == entries - 1)
        let edited = cloud.records(in: Self.zone).first { $0.id.name == "g0:games" }
        #expect(edited?.fields["title"] == .text("edited"))
        #expect(try await phone.database.read { db in try Self.logEntries(in: db) } == 1)
    }
}
