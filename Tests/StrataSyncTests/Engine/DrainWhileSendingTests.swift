import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataSync

/// A send that starts on a long change log drains it a stretch at a time while its requests
/// travel (issue #27). These try what that could break: a local transaction cut between two
/// stretches, one longer than a stretch, a record edited again further down the log, records
/// waiting from an earlier send, a merge in the middle, a send that fails half way, and the
/// progress a UI shows meanwhile.
@Suite(.timeLimit(.minutes(3)))
struct DrainWhileSendingTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    /// A local transaction: a game and its players, by record name.
    struct LocalTransaction {
        var names: [String]
    }

    /// Games and players in transactions of the given sizes (a game, then `size - 1` of its
    /// players; with `childrenFirst`, the players first, foreign keys deferred), numbered from
    /// `first`.
    static func insert(
        sizes: [Int], into device: SyncTestDevice, first: Int = 0, childrenFirst: Bool = false
    ) async throws -> [LocalTransaction] {
        var transactions: [LocalTransaction] = []
        for (offset, size) in sizes.enumerated() {
            let game = "g\(first + offset)"
            let gameSQL = "INSERT INTO games (id, title, score) VALUES ('\(game)', 'Game', \(offset));"
            var names = [RecordName(table: "games", primaryKey: game).text]
            var players = ""
            for player in 0..<max(0, size - 1) {
                players += "INSERT INTO players (id, gameID, name) VALUES ('\(game)p\(player)', '\(game)', 'P');"
                names.append(RecordName(table: "players", primaryKey: "\(game)p\(player)").text)
            }
            let sql = childrenFirst ? "PRAGMA defer_foreign_keys = ON;" + players + gameSQL : gameSQL + players
            try await device.database.write { [sql] db in try db.execute(sql: sql) }
            transactions.append(LocalTransaction(names: names))
        }
        return transactions
    }

    /// Transaction sizes from `seed`: mostly small, some near a batch's size, so stretches of
    /// 1,000 entries end inside many of them; `giant` adds one longer than two stretches.
    static func sizes(seed: UInt64, total: Int, batchSize: Int, giant: Int? = nil) -> [Int] {
        var generator = SeededGenerator(state: seed)
        var sizes: [Int] = []
        var count = 0
        while count < total {
            let size =
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: Int.random(in: max(1, batchSize - 2)...batchSize + 2, using: &generator)
                case 1: 1
                default: Int.random(in: 2...37, using: &generator)
                }
            sizes.append(size)
            count += size
            if let giant, sizes.count == 5 {
                sizes.append(giant)
                count += giant
            }
        }
        return sizes
    }

    /// What a test learns from the requests: which request first carried each record, and
    /// whether the log still held entries when the first request left.
    final class Requests: Sendable {
        let firstCarried = Mutex<[String: Int]>([:])
        let count = Atomic<Int>(0)
        let undrainedAtFirst = Mutex<Bool?>(nil)
        let toSendAtFirst = Mutex<Int?>(nil)
    }

    /// What a test does to a modify request before it goes on: the request's number (from
    /// 1), its saves, the cloud, and the phone.
    typealias Alter =
        @Sendable (_ number: Int, _ saving: [CloudRecord], _ next: any CloudDatabase, _ phone: SyncTestDevice?) async throws -> Void

    static func container(
        _ cloud: MockCloud, requests: Requests, device: @escaping @Sendable () -> SyncTestDevice?,
        alter: Alter? = nil
    ) -> InterceptingContainer {
        InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            let number = requests.count.add(1, ordering: .sequentiallyConsistent).newValue
            if number == 1, let device = device() {
                let undrained = try await device.database.write { db in try ChangeLogDrain.hasUndrained(in: db) }
                requests.undrainedAtFirst.withLock { $0 = undrained }
                let toSend = device.engine.status.progress.toSend
                requests.toSendAtFirst.withLock { $0 = toSend }
            }
            requests.firstCarried.withLock { carried in
                for record in saving where carried[record.id.name] == nil { carried[record.id.name] = number }
            }
            try await alter?(number, saving, next, device())
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
    }

    /// A phone over a new `MockCloud`, its modify requests seen (and altered by `alter`) on
    /// the way, without end-to-end encryption so the test reads the records it sends.
    static func phone(
        batchSize: Int,
        alter: Alter? = nil
    ) async throws -> (cloud: MockCloud, requests: Requests, phone: SyncTestDevice) {
        let cloud = MockCloud()
        let requests = Requests()
        let box = Mutex<SyncTestDevice?>(nil)
        let container = Self.container(cloud, requests: requests, device: { box.withLock { $0 } }, alter: alter)
        let phone = try await SyncTestDevice("phone", container: container, batchSize: batchSize, encryption: .disabled)
        box.withLock { $0 = phone }
        return (cloud, requests, phone)
    }

    /// A new device fetching everything ends with the phone's rows; returns it.
    @discardableResult
    static func expectAFreshDeviceMatches(_ phone: SyncTestDevice, in cloud: MockCloud) async throws -> SyncTestDevice {
        let fresh = try await SyncTestDevice("tablet", cloud: cloud, encryption: .disabled)
        try await fresh.engine.fetchChanges()
        #expect(try await fresh.rows() == phone.rows())
        return fresh
    }

    /// Each local transaction no larger than a request arrived in one request.
    static func expectWhole(_ transactions: [LocalTransaction], batchSize: Int, requests: Requests) {
        let carried = requests.firstCarried.withLock { $0 }
        for transaction in transactions where transaction.names.count <= batchSize {
            let numbers = Set(transaction.names.map { carried[$0] })
            #expect(numbers.count == 1 && !numbers.contains(nil), "transaction of \(transaction.names.first ?? "") split: \(numbers)")
        }
    }

    /// A long log of small transactions, and one longer than two stretches: the first request
    /// leaves before the log is drained, every transaction that fits a request arrives whole,
    /// and everything arrives.
    @Test(arguments: [(7, UInt64(1)), (50, 2), (400, 3), (400, 4), (500, 5), (500, 6)])
    func aLongLogIsSentWhileItDrains(batchSize: Int, seed: UInt64) async throws {
        let (cloud, requests, phone) = try await Self.phone(batchSize: batchSize)
        let sizes = Self.sizes(seed: seed, total: 1_800, batchSize: batchSize, giant: 2_150)
        let transactions = try await Self.insert(sizes: sizes, into: phone)
        let total = sizes.reduce(0, +)
        try await phone.engine.sendChanges()

        #expect(requests.undrainedAtFirst.withLock { $0 } == true)
        #expect(requests.toSendAtFirst.withLock { $0 } == total)
        Self.expectWhole(transactions, batchSize: batchSize, requests: requests)
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == total)
        #expect(try await phone.database.read { db in try ChangeLog.count(in: db) } == 1)
        try await Self.expectAFreshDeviceMatches(phone, in: cloud)
    }

    /// A record edited again further down the log would go with that later edit before the
    /// rest of its transaction: such a log drains whole first. The record then belongs to its
    /// last transaction, which arrives whole (a delete travels as a deletion, not a save).
    @Test(arguments: [
        ("UPDATE players SET name = 'edited' WHERE id = 'g0p0'", "g0p0", false),
        ("DELETE FROM players WHERE id = 'g1p0'", "g1p0", true),
    ])
    func aRecordLoggedTwiceDrainsTheLogFirst(edit: String, player: String, deletes: Bool) async throws {
        let (cloud, requests, phone) = try await Self.phone(batchSize: 50)
        var transactions = try await Self.insert(sizes: Array(repeating: 30, count: 50), into: phone)
        // The edit, with a new game of its own, in one transaction at the end of the log.
        try await phone.database.write { db in
            try db.execute(sql: edit)
            try db.execute(sql: "INSERT INTO games (id, title) VALUES ('last', 'Last')")
        }
        let edited = RecordName(table: "players", primaryKey: player).text
        for index in transactions.indices { transactions[index].names.removeAll { $0 == edited } }
        let last = RecordName(table: "games", primaryKey: "last").text
        transactions.append(LocalTransaction(names: deletes ? [last] : [edited, last]))
        try await phone.engine.sendChanges()

        #expect(requests.undrainedAtFirst.withLock { $0 } == false)
        Self.expectWhole(transactions, batchSize: 50, requests: requests)
        #expect(try await phone.pending() == 0)
        try await Self.expectAFreshDeviceMatches(phone, in: cloud)
    }

    /// Records waiting from a send that failed: the log behind them drains whole first (a
    /// waiting record's row may hold an edit still in the log).
    @Test func recordsWaitingFromBeforeDrainTheLogFirst() async throws {
        let cloud = MockCloud()
        let requests = Requests()
        let box = Mutex<SyncTestDevice?>(nil)
        let failFirst = Atomic<Bool>(true)
        let container = Self.container(cloud, requests: requests, device: { box.withLock { $0 } }) { _, _, _, _ in
            if failFirst.exchange(false, ordering: .sequentiallyConsistent) { throw CloudError.networkFailure }
        }
        let phone = try await SyncTestDevice("phone", container: container, batchSize: 50, encryption: .disabled)
        try await phone.database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES ('early', 'Early')")
        }
        await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
        #expect(try await phone.pending() == 1)
        box.withLock { $0 = phone }
        requests.count.store(0, ordering: .sequentiallyConsistent)
        requests.firstCarried.withLock { $0 = [:] }
        try await phone.database.write { db in try db.execute(sql: "UPDATE games SET title = 'Later' WHERE id = 'early'") }
        let transactions = try await Self.insert(sizes: Array(repeating: 25, count: 60), into: phone)
        try await phone.engine.sendChanges()

        #expect(requests.undrainedAtFirst.withLock { $0 } == false)
        Self.expectWhole(transactions, batchSize: 50, requests: requests)
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == 1 + 1_500)
    }

    /// A send that fails while the log still drains reports what it left there as waiting,
    /// and the next send sends it: nothing is lost, nothing is sent twice as a new record.
    @Test(arguments: [2, 5, 9])
    func aSendThatFailsWhileDrainingLeavesTheRestWaiting(failing request: Int) async throws {
        let (cloud, requests, phone) = try await Self.phone(batchSize: 100) { number, _, _, _ in
            if number == request { throw CloudError.serviceUnavailable(retryAfter: nil) }
        }
        let transactions = try await Self.insert(sizes: Array(repeating: 20, count: 150), into: phone)
        await #expect(throws: (any Error).self) { try await phone.engine.sendChanges() }
        let waiting = try await phone.pending()
        #expect(waiting == 3_000 - cloud.records(in: Self.zone).count)
        #expect(waiting > 0)
        try await phone.engine.sendChanges()
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == 3_000)
        Self.expectWhole(transactions, batchSize: 100, requests: requests)
    }

    /// Another device saved one of the records first: the answer is a conflict, merged, and
    /// the log drains whole before the merge; the send goes on and everything converges.
    @Test(arguments: [1, 3, 6])
    func aConflictWhileDrainingMergesAfterTheWholeLog(at request: Int) async throws {
        let (cloud, requests, phone) = try await Self.phone(batchSize: 100) { number, saving, next, _ in
            guard number == request, var first = saving.first else { return }
            // The same record, saved first by another device with an older edit of a field.
            first.changeTag = nil
            first.fields["title"] = .text("theirs")
            first.fieldVersions["title"] = HybridTimestamp(packedTime: 1, node: "laptop")
            _ = try await next.modifyRecords(saving: [first], deleting: [])
        }
        _ = try await Self.insert(sizes: Array(repeating: 20, count: 150), into: phone)
        try await phone.engine.sendChanges()
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == 3_000)
        #expect(try await phone.strings("SELECT title FROM games WHERE title = 'theirs'").isEmpty)
        try await Self.expectAFreshDeviceMatches(phone, in: cloud)
    }

    /// The app writes while the send drains: an edit of a record already sent, one of a
    /// record not drained yet, and a new record, in one transaction. Nothing is lost, and
    /// every device ends the same.
    @Test(arguments: [2, 4, 7])
    func writesDuringTheSendAreSentToo(at request: Int) async throws {
        let (cloud, requests, phone) = try await Self.phone(batchSize: 100) { number, _, _, phone in
            guard number == request, let phone else { return }
            // Detached: the request's task carries the engine's mark, whose writes are not
            // captured; the app's are.
            try await Task.detached {
                try await phone.database.write { db in
                    try db.execute(sql: "UPDATE games SET title = 'edited early' WHERE id = 'g0'")
                    try db.execute(sql: "UPDATE players SET name = 'edited late' WHERE id = 'g149p3'")
                    try db.execute(sql: "INSERT INTO games (id, title) VALUES ('meanwhile', 'Meanwhile')")
                }
            }.value
        }
        _ = try await Self.insert(sizes: Array(repeating: 20, count: 150), into: phone)
        try await phone.engine.sendChanges()
        try await phone.engine.sendChanges()
        #expect(try await phone.pending() == 0)
        #expect(cloud.records(in: Self.zone).count == 3_001)
        let fresh = try await Self.expectAFreshDeviceMatches(phone, in: cloud)
        #expect(try await fresh.strings("SELECT title FROM games WHERE id = 'g0'") == ["edited early"])
        #expect(try await fresh.strings("SELECT name FROM players WHERE id = 'g149p3'") == ["edited late"])
    }

    /// A stretch ends where a local transaction ends; only a transaction longer than two
    /// stretches is cut, and then at two stretches.
    @Test(arguments: [(3, [2, 2, 2], 4), (4, [2, 2, 2], 4), (4, [5, 1], 5), (3, [9, 1], 6), (3, [1, 1, 1, 1], 3), (5, [2], 2)])
    func aStretchEndsWithATransaction(limit: Int, sizes: [Int], drained: Int) async throws {
        let database = try DatabaseQueue()
        let phone = try await SyncTestDevice("phone", cloud: MockCloud(), batchSize: 1, database: database, encryption: .disabled)
        _ = try await Self.insert(sizes: sizes, into: phone)
        let schema = phone.engine.schema
        let through = try await database.write { db in
            _ = try ChangeLogDrain.drainBatch(
                in: db, schema: schema, zone: Self.zone, node: "phone", limit: limit, wholeTransactions: true)
            return try ChangeLogDrain.drainedThrough(in: db)
        }
        let first = try await database.read { db in try Int64.fetchOne(db, sql: "SELECT min(sequence) FROM strata_sync_changes") ?? 0 }
        #expect(through - first + 1 == Int64(drained))
    }
}
