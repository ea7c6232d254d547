import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// A send keeps one batch in flight while it records the answers to the batch before and
/// builds the batch after (issue #27). These try what that overlap could break: edits made
/// while a batch travels, a batch answered in part, children whose parents are in flight,
/// requests that must never overlap, and record names that must be left out in SQL.
@Suite(.timeLimit(.minutes(2)))
struct PipelinedSendTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// Games and their players inserted in `transactions` transactions, each a game and
    /// `playersPerGame` players; the players come first in each transaction, so a batch holds
    /// children before its own parents are sorted in.
    static func insertGames(_ count: Int, playersPerGame: Int, into device: SyncTestDevice, prefix: String = "g") async throws {
        for game in 0..<count {
            var sql = ""
            for player in 0..<playersPerGame {
                sql += "INSERT INTO players (id, gameID, name) VALUES ('\(prefix)\(game)p\(player)', '\(prefix)\(game)', 'P\(player)');"
            }
            sql += "INSERT INTO games (id, title, score) VALUES ('\(prefix)\(game)', 'Game \(game)', \(game));"
            try await device.database.write { [sql] db in
                try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
                try db.execute(sql: sql)
            }
        }
    }

    /// At most `maximumBatchesInFlight` requests travel at once, never a parent beside its child; every record
    /// arrives, and the cloud refuses no child for a parent it lacks: at batch sizes 1, 2, 3
    /// and one under and over a transaction's size.
    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func requestsOverlapOnlyWhenUnrelatedAndParentsGoFirst(batchSize: Int) async throws {
        let cloud = MockCloud()
        let inFlight = Atomic<Int>(0)
        let mostInFlight = Atomic<Int>(0)
        let refusals = Atomic<Int>(0)
        let travelling = Mutex<[Int: [CloudRecord]]>([:])
        let requests = Atomic<Int>(0)
        let relatedTogether = Atomic<Int>(0)
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let number = requests.add(1, ordering: .sequentiallyConsistent).newValue
            travelling.withLock { travelling in
                let names = Set(saving.map(\.id.name))
                for other in travelling.values {
                    let otherNames = Set(other.map(\.id.name))
                    if saving.contains(where: { $0.parent.map { otherNames.contains($0.name) } ?? false })
                        || other.contains(where: { $0.parent.map { names.contains($0.name) } ?? false })
                    {
                        relatedTogether.add(1, ordering: .relaxed)
                    }
                }
                travelling[number] = saving
            }
            defer { _ = travelling.withLock { $0.removeValue(forKey: number) } }
            let now = inFlight.add(1, ordering: .sequentiallyConsistent).newValue
            mostInFlight.max(now, ordering: .sequentiallyConsistent)
            defer { inFlight.subtract(1, ordering: .sequentiallyConsistent) }
            // Give the engine time to build the next batch while this one travels.
            await Task.yield()
            let result = try await next.modifyRecords(saving: saving, deleting: deleting)
            for case .failure(.referenceViolation) in result.saveResults.values { refusals.add(1, ordering: .relaxed) }
            return result
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: batchSize)
        try await Self.insertGames(7, playersPerGame: 4, into: phone)
        try await phone.engine.sendChanges()
        #expect(try await phone.pending() == 0)
        #expect(mostInFlight.load(ordering: .sequentiallyConsistent) <= SyncEngineConfiguration().maximumBatchesInFlight)
        #expect(relatedTogether.load(ordering: .relaxed) == 0)
        #expect(refusals.load(ordering: .relaxed) == 0)
        #expect(cloud.records(in: Self.zone).count == 35)
        #expect(cloud.modifyRequestSizes.allSatisfy { $0 <= batchSize })

        let laptop = try await SyncTestDevice("laptop", cloud: cloud)
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()))
    }

    /// Rows edited while their batch travels, and rows of the batch built behind it, keep
    /// their edits: they stay pending and go out later, and another device ends with them.
    @Test(arguments: [1, 2, 3])
    func editsMadeWhileABatchTravelsGoOutAfterIt(editedRequest: Int) async throws {
        let cloud = MockCloud()
        let requests = Atomic<Int>(0)
        let databaseBox = Mutex<DatabaseQueue?>(nil)
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let number = requests.add(1, ordering: .sequentiallyConsistent).newValue
            if number == editedRequest, let database = databaseBox.withLock({ $0 }) {
                // The app's write, not the engine's: a task of its own, without the engine's
                // task-local mark.
                try await Task.detached {
                    try await database.write { db in
                        // In this request, and (with batches of 4) in the ones after it.
                        try db.execute(sql: "UPDATE games SET title = title || ' edited'")
                        try db.execute(sql: "UPDATE players SET name = name || ' edited'")
                    }
                }.value
            }
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 4)
        databaseBox.withLock { $0 = phone.database }
        try await Self.insertGames(4, playersPerGame: 3, into: phone)
        try await phone.engine.sendChanges()
        // Edits made during the last requests may still wait: a second send takes them.
        try await phone.engine.sendChanges()
        #expect(try await phone.pending() == 0)
        let edited = try await phone.strings("SELECT CAST(count(*) AS TEXT) FROM games WHERE title LIKE '% edited'")
        #expect(edited == ["4"])

        let laptop = try await SyncTestDevice("laptop", cloud: cloud)
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()))
    }

    /// A batch the cloud answers in part (one record left unanswered, as a zone-wide refusal
    /// leaves it): the batch built behind it is dropped and built again, and every record
    /// still arrives.
    @Test(arguments: [1, 2, 3])
    func aBatchAnsweredInPartDropsTheBatchBuiltBehindIt(refusedRequest: Int) async throws {
        let cloud = MockCloud()
        let requests = Atomic<Int>(0)
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let number = requests.add(1, ordering: .sequentiallyConsistent).newValue
            guard number == refusedRequest, let refused = saving.last else {
                return try await next.modifyRecords(saving: saving, deleting: deleting)
            }
            var result = try await next.modifyRecords(saving: Array(saving.dropLast()), deleting: deleting)
            result.saveResults[refused.id] = .failure(.batchRequestFailed(refused.id))
            return result
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 3)
        try await Self.insertGames(4, playersPerGame: 2, into: phone)
        try await phone.engine.sendChanges()
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == 12)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud)
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()))
    }

    /// A request that fails while the next batch was built (a transient error) fails the send
    /// and loses nothing: what the cloud did not accept stays pending (a batch that travelled
    /// beside the failed one may have been accepted), and the next send sends it.
    @Test func aFailedRequestLeavesEverythingPending() async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, batchSize: 2)
        try await Self.insertGames(3, playersPerGame: 1, into: phone)
        cloud.failNextRequests(1, with: .networkFailure, operations: [.modifyRecords])
        await #expect(throws: CloudError.self) { try await phone.engine.sendChanges() }
        #expect(try await phone.pending() >= 2)
        #expect(try await phone.pending() + cloud.records(in: Self.zone).count == 6)
        try await phone.engine.sendChanges()
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == 6)
    }

    /// The batch built behind one in flight leaves that one's records out in SQL, whatever
    /// their names hold: quotes, colons, backslashes, control characters, other scripts.
    @Test func theBatchBehindOneInFlightLeavesItsRecordsOut() async throws {
        let cloud = MockCloud()
        let phone = try await SyncTestDevice("phone", cloud: cloud, batchSize: 400)
        let keys = ["a'b", "c\"d", "e:f", "g\\h", "i\u{1}j", "ключ", "🎲", "plain", "x y", "%_"]
        try await phone.database.write { db in
            for key in keys { try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 't')", arguments: [key]) }
        }
        try await phone.engine.drainChangeLog()
        let outgoing = OutgoingChanges(
            schema: try await phone.database.read { db in try SyncSchema.read(tables: ["games", "players"], in: db) })
        let first = try await phone.database.write { db in try outgoing.nextBatch(limit: 4, in: db) }
        #expect(first.count == 4)
        let inFlight = Set(first.map(\.metadata.name.text))
        let following = try await phone.database.write { db in
            try outgoing.batch(following: ExactNames(inFlight), limit: 400, in: db)
        }
        let followingNames = Set(following?.map(\.metadata.name.text) ?? [])
        #expect(followingNames.isDisjoint(with: inFlight))
        #expect(followingNames.union(inFlight) == Set(keys.map { "\($0):games" }))
    }
}
