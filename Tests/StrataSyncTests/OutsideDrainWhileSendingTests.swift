import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// An outside tester's shapes for a send that drains a long change log as it goes
/// (``DrainWhileSending``): what the author's own tests did not generate.
@Suite(.timeLimit(.minutes(5)))
struct OutsideDrainWhileSendingTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// What the requests carried: for each record, the first request that carried it, and
    /// the fields each request carried for each record.
    final class Seen: Sendable {
        let count = Atomic<Int>(0)
        let firstCarried = Mutex<[String: Int]>([:])
        let carriedFields = Mutex<[(request: Int, name: String, fields: [String: String])]>([])
        let progress = Mutex<[(request: Int, sent: Int, toSend: Int)]>([])
        /// The first records the cloud refused, other than for another change failing.
        let refusals = Mutex<[String]>([])
    }

    static func describe(_ value: Any) -> String { "\(value)" }

    static func container(
        _ cloud: MockCloud, seen: Seen, device: @escaping @Sendable () -> SyncTestDevice?,
        alter: (@Sendable (_ number: Int, _ saving: [CloudRecord], _ next: any CloudDatabase) async throws -> Void)? = nil
    ) -> InterceptingContainer {
        InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let number = seen.count.add(1, ordering: .sequentiallyConsistent).newValue
            if let device = device() {
                // Read under the lock: two requests travel together, and a read taken before
                // the other's but appended after it would look like progress falling.
                seen.progress.withLock { steps in
                    let progress = device.engine.status.progress
                    steps.append((number, progress.sent, progress.toSend))
                }
            }
            seen.firstCarried.withLock { carried in
                for record in saving where carried[record.id.name] == nil { carried[record.id.name] = number }
            }
            seen.carriedFields.withLock { carried in
                for record in saving {
                    carried.append((number, record.id.name, record.fields.mapValues { Self.describe($0) }))
                }
            }
            try await alter?(number, saving, next)
            let result = try await next.modifyRecords(saving: saving, deleting: deleting)
            for (id, outcome) in result.saveResults {
                if case .failure(let error) = outcome, !"\(error)".contains("batchRequestFailed") {
                    seen.refusals.withLock { if $0.count < 5 { $0.append("request \(number): \(id.name): \(error)") } }
                }
            }
            return result
        }
    }

    /// A game and `size - 1` players per transaction; with `childrenFirst`, the players are
    /// inserted before their game (foreign keys deferred).
    static func insert(
        sizes: [Int], into device: SyncTestDevice, first: Int = 0, childrenFirst: Bool = false
    ) async throws -> [[String]] {
        try await DrainWhileSendingTests.insert(sizes: sizes, into: device, first: first, childrenFirst: childrenFirst).map(\.names)
    }

    /// A phone over a new `MockCloud` holding a log of 150 transactions of 40 (player
    /// `g75p3` in the middle), whose modify requests pass through `alter` (given the phone)
    /// once the log is there; with `drainWholeFirst`, the log drained by hand first.
    static func phoneWithALongLog(
        batchSize: Int, drainWholeFirst: Bool, seen: Seen,
        alter: @escaping @Sendable (_ number: Int, _ saving: [CloudRecord], _ phone: SyncTestDevice) async throws -> Void
    ) async throws -> (MockCloud, SyncTestDevice) {
        let cloud = MockCloud()
        let box = Mutex<SyncTestDevice?>(nil)
        let container = Self.container(cloud, seen: seen, device: { box.withLock { $0 } }) { number, saving, _ in
            guard let phone = box.withLock({ $0 }) else { return }
            try await alter(number, saving, phone)
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: batchSize, encryption: .disabled)
        box.withLock { $0 = phone }
        _ = try await Self.insert(sizes: Array(repeating: 40, count: 150), into: phone)
        if drainWholeFirst { try await Self.drainWhole(phone) }
        return (cloud, phone)
    }

    /// A phone over a new `MockCloud`, its requests only seen.
    static func plainPhone(batchSize: Int, seen: Seen) async throws -> (MockCloud, SyncTestDevice) {
        let cloud = MockCloud()
        let container = Self.container(cloud, seen: seen, device: { nil })
        return (cloud, try await SyncTestDevice("phone", container: container, batchSize: batchSize, encryption: .disabled))
    }

    /// Statements run as the app runs them, in one transaction: detached from the engine's
    /// request, whose task carries the engine's mark (its writes are not captured).
    static func writeAsTheApp(_ phone: SyncTestDevice, _ statements: String...) async throws {
        try await Task.detached {
            try await phone.database.write { db in
                for statement in statements { try db.execute(sql: statement) }
            }
        }.value
    }

    /// The whole log drained by hand first, as a send did before it drained as it went (a
    /// comparison).
    static func drainWhole(_ phone: SyncTestDevice) async throws {
        let schema = phone.engine.schema
        try await phone.database.write { db in try ChangeLogDrain.drainAll(in: db, schema: schema, zone: Self.zone, node: "phone") }
    }

    static func seededSizes(seed: UInt64, total: Int, batchSize: Int) -> [Int] {
        DrainWhileSendingTests.sizes(seed: seed, total: total, batchSize: batchSize)
    }

    static func expectWhole(_ transactions: [[String]], batchSize: Int, seen: Seen, sourceLocation: SourceLocation = #_sourceLocation) {
        let carried = seen.firstCarried.withLock { $0 }
        var split = 0
        var example = ""
        for names in transactions where names.count <= batchSize {
            let numbers = Set(names.map { carried[$0] })
            if numbers.count != 1 || numbers.contains(nil) {
                split += 1
                let counts = Dictionary(grouping: names, by: { carried[$0] ?? -1 }).mapValues(\.count)
                example += "\(names.first ?? "") (\(names.count) records): \(counts); "
            }
        }
        #expect(split == 0, "\(split) transactions split, e.g. \(example)", sourceLocation: sourceLocation)
    }

    static func expectConverges(
        _ phone: SyncTestDevice, cloud: MockCloud, total: Int, sourceLocation: SourceLocation = #_sourceLocation
    )
        async throws
    {
        #expect(try await phone.pending() == 0, sourceLocation: sourceLocation)
        #expect(cloud.records(in: Self.zone).count == total, sourceLocation: sourceLocation)
        let fresh = try await SyncTestDevice("tablet", cloud: cloud, encryption: .disabled)
        try await fresh.engine.fetchChanges()
        let (mine, theirs) = (try await phone.rows(), try await fresh.rows())
        #expect(mine.count == theirs.count, sourceLocation: sourceLocation)
        #expect(
            mine == theirs, "first difference: \(zip(mine, theirs).first { $0 != $1 }.map { "\($0)" } ?? "-")",
            sourceLocation: sourceLocation)
    }

    // MARK: - The app's own transaction written while the send drains

    /// The app commits, during the send, one transaction that edits a record still undrained
    /// in the log and inserts a new game: that transaction (2 records) fits a request, so the
    /// edit must not reach the cloud in a request before (or without) the new game.
    @Test(arguments: [(100, 1, false), (100, 3, false), (400, 1, false), (400, 2, false), (400, 1, true), (400, 2, true)])
    func anAppTransactionWrittenDuringTheSendArrivesWhole(batchSize: Int, at request: Int, drainWholeFirst: Bool) async throws {
        let seen = Seen()
        let (cloud, phone) = try await Self.phoneWithALongLog(batchSize: batchSize, drainWholeFirst: drainWholeFirst, seen: seen) {
            number, _, phone in
            guard number == request else { return }
            try await Self.writeAsTheApp(
                phone, "UPDATE players SET name = 'edited late' WHERE id = 'g75p3'",
                "INSERT INTO games (id, title) VALUES ('meanwhile', 'Meanwhile')")
        }
        try await phone.engine.sendChanges()
        try await phone.engine.sendChanges()
        let carried = seen.carriedFields.withLock { $0 }
        let edited = RecordName(table: "players", primaryKey: "g75p3").text
        let editArrived = carried.first { $0.name == edited && $0.fields.values.contains { $0.contains("edited late") } }?.request
        let newArrived = carried.first { $0.name == RecordName(table: "games", primaryKey: "meanwhile").text }?.request
        #expect(editArrived != nil && newArrived != nil)
        #expect(
            editArrived == newArrived,
            "the edit of g75p3 went in request \(editArrived ?? -1), the new game of its transaction in \(newArrived ?? -1)")
        try await Self.expectConverges(phone, cloud: cloud, total: 6_001)
    }

    /// The app, during the send, deletes or renames rows still undrained in the middle of the
    /// log (their inserts drain later, the row gone): everything converges, nothing remains
    /// waiting.
    @Test(arguments: [
        "DELETE FROM games WHERE id = 'g75'",
        "UPDATE players SET id = 'moved' WHERE id = 'g75p3'",
        "DELETE FROM players WHERE id = 'g75p3'; INSERT INTO players (id, gameID, name) VALUES ('g75p3', 'g76', 'again')",
    ])
    func anAppDeleteOrRenameOfAnUndrainedRowDuringTheSend(sql: String) async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let box = Mutex<SyncTestDevice?>(nil)
        let container = Self.container(cloud, seen: seen, device: { box.withLock { $0 } }) { number, _, _ in
            guard number == 1, let phone = box.withLock({ $0 }) else { return }
            try await Self.writeAsTheApp(phone, sql, "INSERT INTO games (id, title) VALUES ('meanwhile', 'Meanwhile')")
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 400, encryption: .disabled)
        box.withLock { $0 = phone }
        _ = try await Self.insert(sizes: Array(repeating: 40, count: 150), into: phone)
        try await phone.engine.sendChanges()
        try await phone.engine.sendChanges()
        let rows = try await phone.database.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM games") ?? 0)
                + (try Int.fetchOne(db, sql: "SELECT count(*) FROM players") ?? 0)
        }
        try await Self.expectConverges(phone, cloud: cloud, total: rows)
    }

    /// The cloud applies a request but its answer is lost (the hook throws after passing it
    /// on), at several indices: the next send merges and converges.
    @Test(arguments: [1, 2, 3, 5, 8])
    func anAnswerLostAfterTheCloudAppliedIt(at request: Int) async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let container = Self.container(cloud, seen: seen, device: { nil }) { number, saving, next in
            if number == request {
                _ = try await next.modifyRecords(saving: saving, deleting: [])
                throw CloudError.networkFailure
            }
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 150, encryption: .disabled)
        let sizes = Self.seededSizes(seed: 500 + UInt64(request), total: 2_200, batchSize: 150)
        let transactions = try await Self.insert(sizes: sizes, into: phone)
        let total = sizes.reduce(0, +)
        await #expect(throws: (any Error).self) { try await phone.engine.sendChanges() }
        let waiting = try await phone.pending()
        #expect(waiting >= total - cloud.records(in: Self.zone).count && waiting <= total)
        try await phone.engine.sendChanges()
        Self.expectWhole(transactions, batchSize: 150, seen: seen)
        try await Self.expectConverges(phone, cloud: cloud, total: total)
    }

    /// The app, during the send, moves a player still undrained in the middle of the log to a
    /// new game, in one transaction: a parent must reach the cloud no later than its child, so
    /// no request may carry the moved player before the cloud holds the new game.
    @Test(arguments: [(100, false), (400, false), (400, true)])
    func aChildMovedToANewParentDuringTheSendNeverArrivesFirst(batchSize: Int, drainWholeFirst: Bool) async throws {
        let seen = Seen()
        let orphans = Mutex<[Int]>([])
        let moved = RecordName(table: "players", primaryKey: "g75p3").text
        let parent = RecordName(table: "games", primaryKey: "newparent").text
        let cloudBox = Mutex<MockCloud?>(nil)
        let (cloud, phone) = try await Self.phoneWithALongLog(batchSize: batchSize, drainWholeFirst: drainWholeFirst, seen: seen) {
            number, saving, phone in
            let carriesMoved = saving.contains {
                $0.id.name == moved && $0.fields.values.contains { Self.describe($0).contains("newparent") }
            }
            let cloudHasParent = cloudBox.withLock { $0 }?.records(in: Self.zone).contains(where: { $0.id.name == parent }) ?? false
            if carriesMoved && !saving.contains(where: { $0.id.name == parent }) && !cloudHasParent {
                orphans.withLock { $0.append(number) }
            }
            guard number == 1 else { return }
            try await Self.writeAsTheApp(
                phone, "INSERT INTO games (id, title) VALUES ('newparent', 'New')",
                "UPDATE players SET gameID = 'newparent' WHERE id = 'g75p3'")
        }
        cloudBox.withLock { $0 = cloud }
        var failures: [String] = []
        for _ in 0..<3 {
            do {
                try await phone.engine.sendChanges()
                if try await phone.pending() == 0 { break }
            } catch { failures.append("\(error)".prefix(200) + "") }
        }
        #expect(failures.isEmpty, "sends failed: \(failures); refused: \(seen.refusals.withLock { $0 })")
        #expect(
            orphans.withLock { $0 }.isEmpty,
            "the moved player reached the cloud before its new game, in request(s) \(orphans.withLock { $0 })")
        try await Self.expectConverges(phone, cloud: cloud, total: 6_001)
    }

    /// The app writes more than a stretch at each of the first 30 requests: the log grows
    /// faster than a stretch a request. The send must end (returning or stopping), and a few
    /// more sends leave nothing waiting, every device the same.
    @Test func anAppWritingFasterThanTheSendDrainsDoesNotKeepItGoingForever() async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let box = Mutex<SyncTestDevice?>(nil)
        let container = Self.container(cloud, seen: seen, device: { box.withLock { $0 } }) { number, _, _ in
            guard number <= 30, let phone = box.withLock({ $0 }) else { return }
            try await Task.detached {
                _ = try await Self.insert(sizes: [300, 300], into: phone, first: 1_000 + 2 * number)
            }.value
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 100, encryption: .disabled)
        box.withLock { $0 = phone }
        _ = try await Self.insert(sizes: Array(repeating: 20, count: 150), into: phone)
        var sends = 0
        while sends < 5 {
            sends += 1
            do { try await phone.engine.sendChanges() } catch {}
            if try await phone.pending() == 0 { break }
        }
        let requestsMade = seen.count.load(ordering: .sequentiallyConsistent)
        #expect(try await phone.pending() == 0, "after \(sends) sends, \(requestsMade) requests")
        try await Self.expectConverges(phone, cloud: cloud, total: 3_000 + 30 * 600)
    }

    // MARK: - A failure at every request

    /// A request fails (transient) at each index of a small run; the next send finishes it.
    @Test(arguments: 1...16)
    func aFailureAtAnyRequestLosesNothing(failing request: Int) async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let box = Mutex<SyncTestDevice?>(nil)
        let container = Self.container(cloud, seen: seen, device: { box.withLock { $0 } }) { number, _, _ in
            if number == request { throw CloudError.networkFailure }
        }
        let batchSize = 80
        let phone = try await SyncTestDevice("phone", container: container, batchSize: batchSize, encryption: .disabled)
        box.withLock { $0 = phone }
        let sizes = Self.seededSizes(seed: UInt64(request) * 7 + 1, total: 1_100, batchSize: batchSize)
        let transactions = try await Self.insert(sizes: sizes, into: phone)
        let total = sizes.reduce(0, +)
        var failed = false
        do { try await phone.engine.sendChanges() } catch { failed = true }
        if failed {
            #expect(try await phone.pending() == total - cloud.records(in: Self.zone).count)
            try await phone.engine.sendChanges()
        }
        Self.expectWhole(transactions, batchSize: batchSize, seen: seen)
        try await Self.expectConverges(phone, cloud: cloud, total: total)
    }

    // MARK: - A cancelled send

    /// The task running the send is cancelled at a request; a normal send afterwards sends
    /// everything, each transaction that fits a request whole.
    @Test(arguments: [1, 2, 4, 7])
    func aCancelledSendThenASendLosesNothing(at request: Int) async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let box = Mutex<SyncTestDevice?>(nil)
        let task = Mutex<Task<Void, any Error>?>(nil)
        let container = Self.container(cloud, seen: seen, device: { box.withLock { $0 } }) { number, _, _ in
            if number == request { task.withLock { $0?.cancel() } }
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 100, encryption: .disabled)
        let sizes = Self.seededSizes(seed: UInt64(request), total: 2_000, batchSize: 100)
        let transactions = try await Self.insert(sizes: sizes, into: phone)
        let total = sizes.reduce(0, +)
        let sending = Task { try await phone.engine.sendChanges() }
        task.withLock { $0 = sending }
        _ = await sending.result
        let waiting = try await phone.pending()
        // At least what the cloud lacks; a batch the cloud took whose answer the cancelled
        // send did not record may still count as waiting.
        #expect(waiting >= total - cloud.records(in: Self.zone).count && waiting <= total)
        try await phone.engine.sendChanges()
        Self.expectWhole(transactions, batchSize: 100, seen: seen)
        try await Self.expectConverges(phone, cloud: cloud, total: total)
    }

    // MARK: - A new engine after a failed send

    /// The send fails part way; the app restarts (a new engine over the same database) and
    /// sends: nothing lost.
    @Test(arguments: [2, 5, 8])
    func aNewEngineAfterAFailedSendSendsTheRest(failing request: Int) async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let container = Self.container(cloud, seen: seen, device: { nil }) { number, _, _ in
            if number == request { throw CloudError.serviceUnavailable(retryAfter: nil) }
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 60, encryption: .disabled)
        let sizes = Self.seededSizes(seed: 99 + UInt64(request), total: 1_500, batchSize: 60)
        let transactions = try await Self.insert(sizes: sizes, into: phone)
        let total = sizes.reduce(0, +)
        await #expect(throws: (any Error).self) { try await phone.engine.sendChanges() }
        let restarted = try await SyncTestDevice(
            "phone", container: container, schema: "", batchSize: 60, database: phone.database, encryption: .disabled)
        #expect(try await restarted.pending() == total - cloud.records(in: Self.zone).count)
        // More writes after the restart, then the send.
        let later = try await Self.insert(sizes: [3, 1, 40], into: restarted, first: 10_000)
        try await restarted.engine.sendChanges()
        Self.expectWhole(transactions + later, batchSize: 60, seen: seen)
        try await Self.expectConverges(restarted, cloud: cloud, total: total + 44)
    }

    // MARK: - Progress

    /// Progress as each request leaves: the total never falls, never below what was sent,
    /// and is the log's whole length from the first request (with an app write during the
    /// send, it may grow by that write).
    @Test(arguments: [(1, false), (2, false), (400, false), (100, true)])
    func progressNeverFallsAndCountsTheWholeLog(batchSize: Int, appWrites: Bool) async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let box = Mutex<SyncTestDevice?>(nil)
        let container = Self.container(cloud, seen: seen, device: { box.withLock { $0 } }) { number, _, _ in
            guard appWrites, number == 3, let phone = box.withLock({ $0 }) else { return }
            try await Self.writeAsTheApp(phone, "INSERT INTO games (id, title) VALUES ('meanwhile', 'Meanwhile')")
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: batchSize, encryption: .disabled)
        box.withLock { $0 = phone }
        let sizes = Self.seededSizes(seed: UInt64(batchSize), total: batchSize < 10 ? 1_100 : 2_600, batchSize: batchSize)
        _ = try await Self.insert(sizes: sizes, into: phone)
        let total = sizes.reduce(0, +)
        try await phone.engine.sendChanges()
        let progress = seen.progress.withLock { $0 }
        #expect(progress.first?.toSend == total)
        for (before, after) in zip(progress, progress.dropFirst()) {
            #expect(after.toSend >= before.toSend, "total fell at request \(after.request): \(before.toSend) → \(after.toSend)")
            #expect(after.sent >= before.sent)
        }
        for step in progress { #expect(step.sent <= step.toSend) }
        #expect(progress.last.map { $0.toSend <= total + (appWrites ? 1 : 0) } == true, "\(progress.last.map { "\($0)" } ?? "")")
        if appWrites { try await phone.engine.sendChanges() }
        try await Self.expectConverges(phone, cloud: cloud, total: total + (appWrites ? 1 : 0))
    }

    // MARK: - Children logged before their parents

    /// One transaction inserts its players before their games (foreign keys deferred), longer
    /// than two stretches, between small ones: it is cut between stretches, children sent
    /// before their parent is even drained. Everything arrives and a fresh device converges.
    @Test(arguments: [2, 50, 333, 400])
    func childrenBeforeParentsInATransactionCutBetweenStretches(batchSize: Int) async throws {
        let seen = Seen()
        let (cloud, phone) = try await Self.plainPhone(batchSize: batchSize, seen: seen)
        let stretch = DrainWhileSending.stretch(batchSize: batchSize)
        var transactions = try await Self.insert(sizes: Array(repeating: 7, count: 40), into: phone)
        // The giant: players of 30 games first, then the games.
        var sql = "PRAGMA defer_foreign_keys = ON;"
        let perGame = (2 * stretch + 100) / 30
        var giant: [String] = []
        for game in 0..<30 {
            for player in 0..<perGame {
                sql += "INSERT INTO players (id, gameID, name) VALUES ('G\(game)p\(player)', 'G\(game)', 'P');"
                giant.append(RecordName(table: "players", primaryKey: "G\(game)p\(player)").text)
            }
        }
        for game in 0..<30 {
            sql += "INSERT INTO games (id, title) VALUES ('G\(game)', 'Giant');"
            giant.append(RecordName(table: "games", primaryKey: "G\(game)").text)
        }
        try await phone.database.write { [sql] db in try db.execute(sql: sql) }
        transactions += try await Self.insert(sizes: Array(repeating: 5, count: 60), into: phone, first: 100, childrenFirst: true)
        let total = transactions.reduce(0) { $0 + $1.count } + giant.count
        try await phone.engine.sendChanges()
        Self.expectWhole(transactions, batchSize: batchSize, seen: seen)
        try await Self.expectConverges(phone, cloud: cloud, total: total)
    }

    /// Children first in transactions that straddle a stretch's end (just under two
    /// stretches, so not cut): each arrives whole, parents with their children.
    @Test(arguments: [(100, UInt64(3)), (400, 4), (7, 5)])
    func childrenFirstTransactionsAroundAStretchEnd(batchSize: Int, seed: UInt64) async throws {
        let seen = Seen()
        let (cloud, phone) = try await Self.plainPhone(batchSize: batchSize, seen: seen)
        let stretch = DrainWhileSending.stretch(batchSize: batchSize)
        var sizes = Self.seededSizes(seed: seed, total: stretch - 20, batchSize: batchSize)
        sizes += [min(batchSize, 60), stretch - 1, stretch, stretch + 1, 2 * stretch - 3, 1, batchSize]
        sizes += Self.seededSizes(seed: seed + 1, total: stretch, batchSize: batchSize)
        let transactions = try await Self.insert(sizes: sizes, into: phone, childrenFirst: true)
        try await phone.engine.sendChanges()
        Self.expectWhole(transactions, batchSize: batchSize, seen: seen)
        try await Self.expectConverges(phone, cloud: cloud, total: sizes.reduce(0, +))
    }

    // MARK: - Sizes at the boundaries

    /// Transactions of exactly a stretch, one less, one more, two stretches and one more, at
    /// batch sizes 1, 2, either side of where a stretch stops being 500, and at the default.
    @Test(arguments: [(1, false), (2, false), (333, false), (334, false), (335, false), (400, false), (400, true)])
    func transactionsOfStretchSize(batchSize: Int, drainWholeFirst: Bool) async throws {
        let seen = Seen()
        let (cloud, phone) = try await Self.plainPhone(batchSize: batchSize, seen: seen)
        let stretch = DrainWhileSending.stretch(batchSize: batchSize)
        let sizes =
            batchSize <= 2
            ? [1, stretch - 1, 2, stretch, 1, stretch + 1, batchSize, batchSize + 1, 1]
            : [batchSize, stretch - 1, batchSize - 1, stretch, 1, stretch + 1, batchSize + 1, 2 * stretch + 1, 3, batchSize]
        let transactions = try await Self.insert(sizes: sizes, into: phone)
        if drainWholeFirst { try await Self.drainWhole(phone) }
        try await phone.engine.sendChanges()
        Self.expectWhole(transactions, batchSize: batchSize, seen: seen)
        try await Self.expectConverges(phone, cloud: cloud, total: sizes.reduce(0, +))
    }

    // MARK: - Deletes and edits in the log

    /// After a first upload, a long log of deletes (games with their players cascading),
    /// edits and inserts, each record once: it drains as it goes and the cloud ends with the
    /// same rows.
    @Test(arguments: [UInt64(11), 12])
    func deletesEditsAndInsertsInALongLog(seed: UInt64) async throws {
        let cloud = MockCloud()
        let seen = Seen()
        let container = Self.container(cloud, seen: seen, device: { nil })
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 100, encryption: .disabled)
        _ = try await Self.insert(sizes: Array(repeating: 15, count: 120), into: phone)
        try await phone.engine.sendChanges()
        #expect(cloud.records(in: Self.zone).count == 1_800)
        seen.firstCarried.withLock { $0 = [:] }
        var generator = SeededGenerator(state: seed)
        var transactions: [[String]] = []
        var removed = 0
        var added = 0
        for game in 0..<120 {
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                try await phone.execute("DELETE FROM games WHERE id = 'g\(game)'")
                removed += 15
            case 1:
                var sql = "UPDATE games SET title = 'edited \(game)' WHERE id = 'g\(game)';"
                var names = [RecordName(table: "games", primaryKey: "g\(game)").text]
                for player in 0..<14 {
                    sql += "UPDATE players SET name = 'e\(player)' WHERE id = 'g\(game)p\(player)';"
                    names.append(RecordName(table: "players", primaryKey: "g\(game)p\(player)").text)
                }
                try await phone.execute(sql)
                transactions.append(names)
            default:
                var sql = "DELETE FROM players WHERE id = 'g\(game)p0';"
                sql += "INSERT INTO players (id, gameID, name) VALUES ('g\(game)new', 'g\(game)', 'new');"
                try await phone.execute(sql)
                removed += 1
                added += 1
            }
        }
        let undrained = try await phone.database.read { db in try ChangeLogDrain.undrainedCount(in: db) }
        #expect(undrained > DrainWhileSending.stretch(batchSize: 100))
        try await phone.engine.sendChanges()
        Self.expectWhole(transactions, batchSize: 100, seen: seen)
        try await Self.expectConverges(phone, cloud: cloud, total: 1_800 - removed + added)
    }
}
