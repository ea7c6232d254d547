import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// An outside tester's attacks on two modify requests travelling together (Sync.md, "Sending",
/// step 4, "Overlap"), from the documented promises only: related batches (a parent or child,
/// as sent or as the cloud last knew it) never travel together, a parent reaches the cloud
/// before its children, when one of two fails the other's answer is still taken and written
/// before the send reports the failure, merges, zones and fetches come once nothing travels,
/// never more than two travel, and each local transaction still arrives whole. Its devices
/// keep two requests in flight (`maximumBatchesInFlight: 2`): the pairs it stages are that
/// depth's; RequestsTogetherTests and OutsidePipelineTests go deeper.
@Suite(.timeLimit(.minutes(3)))
struct OutsideRequestsTogetherTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    // MARK: - The watch

    typealias Signal = WatchSignal

    /// Where a request stands when it is answered: alone, or the first or second of two
    /// travelling together.
    enum Role: String, Sendable, CustomStringConvertible {
        case alone, first, second
        var description: String { rawValue }
    }

    /// How the cloud answers one request.
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case none, conflict, network, limit, zone, quota, lostAnswer, batchFailed, rateLimited
        var testDescription: String { rawValue }

        /// Whether a send meeting it must end with an error (Sync.md: transient errors end the
        /// send with the error; a quota failure is reported in `SendFailed`).
        var mustSurface: Bool { [.network, .quota, .lostAnswer, .rateLimited].contains(self) }

        /// Answers a request with this fault. `conflict` is the cloud's own answer (the test
        /// made the conflict beforehand); `batchFailed` refuses every item as failed beside
        /// another.
        func answer(_ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase) async throws -> CloudModifyResult {
            switch self {
            case .none, .conflict: return try await next.modifyRecords(saving: saving, deleting: deleting)
            case .network: throw CloudError.networkFailure
            case .limit: throw CloudError.limitExceeded
            case .zone: throw CloudError.zoneNotFound(OutsideRequestsTogetherTests.zone)
            case .quota: throw CloudError.quotaExceeded
            case .rateLimited: throw CloudError.requestRateLimited(retryAfter: .milliseconds(1))
            case .lostAnswer:
                _ = try await next.modifyRecords(saving: saving, deleting: deleting)
                throw CloudError.networkFailure
            case .batchFailed:
                var result = CloudModifyResult()
                for record in saving { result.saveResults[record.id] = .failure(.batchRequestFailed(record.id)) }
                for id in deleting { result.deleteResults[id] = .failure(.batchRequestFailed(id)) }
                return result
            }
        }
    }

    /// What a test does with one request: the fault to answer it with (`.none` passes it on).
    typealias Hook = @Sendable (_ number: Int, _ role: Role, _ saving: [CloudRecord], _ deleting: [CloudRecordID]) async throws -> Fault

    /// Watches every modify request of the synced zone, and every other call the engine makes
    /// while one travels.
    final class Traffic: PrivateDatabaseWatch {
        /// One request travelling: its records and their parents, a signal for the request
        /// that arrives beside it (and which one it was), and one for its answer.
        final class Entry: Sendable {
            let names: Set<String>
            let parents: Set<String>
            let behind = Signal()
            let done = Signal()
            let partner = Mutex<(number: Int, entry: Entry)?>(nil)
            init(names: Set<String>, parents: Set<String>) {
                self.names = names
                self.parents = parents
            }
        }
        struct State {
            var count = 0
            var travelling: [Int: Entry] = [:]
            var most = 0
            var pairs = 0
            var related: [String] = []
            var refusals: [String] = []
            var outOfTurn: [String] = []
            /// Names the cloud accepted and the device heard of, by request.
            var accepted: [(number: Int, names: Set<String>)] = []
            /// Every request's names, by number.
            var sent: [(number: Int, role: Role, names: Set<String>)] = []
            /// Faults injected, with their roles.
            var faults: [(number: Int, role: Role, fault: Fault)] = []
            /// Whether the cloud applied a request whose answer the device never heard.
            var lostAnswers = 0
        }
        let state = Mutex(State())
        let hook = Mutex<Hook?>(nil)
        /// How long a lone request waits for a second one to arrive beside it.
        let pairingBound: Duration
        /// Requests up to this number wait for a second one for ten seconds instead: the test
        /// knows one comes.
        let pairedUpTo: Int
        /// Whether the first of two is held until the second is answered (the cloud takes
        /// them in the other order).
        let secondFirst: Bool

        init(pairingBound: Duration = .milliseconds(15), pairedUpTo: Int = 0, secondFirst: Bool = false, hook: Hook? = nil) {
            self.pairingBound = pairingBound
            self.pairedUpTo = pairedUpTo
            self.secondFirst = secondFirst
            self.hook.withLock { $0 = hook }
        }

        func container(_ base: any CloudContainer) -> WatchedContainer<Traffic> { WatchedContainer(base: base, watch: self) }

        var snapshot: State { state.withLock { $0 } }

        /// Notes a call other than a modify, which must not come while one travels.
        func note(_ call: String) {
            state.withLock { state in
                if !state.travelling.isEmpty {
                    state.outOfTurn.append("\(call) while #\(state.travelling.keys.sorted()) travelled")
                }
            }
        }

        func modify(_ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase) async throws -> CloudModifyResult {
            // Numbered as they come, which is the order the engine sent them in.
            let number = state.withLock { state in
                state.count += 1
                return state.count
            }
            // The parents as the cloud holds them now (for a save that moves a child, the one
            // it leaves; for a delete, the one it is deleted from).
            let held = try await next.fetchRecords(saving.map(\.id) + deleting)
            let names = Set(saving.map(\.id.name) + deleting.map(\.name))
            let parents = Set(saving.compactMap(\.parent?.name) + held.values.compactMap { try? $0.get().parent?.name })
            let entry = Entry(names: names, parents: parents)
            let other = state.withLock { state -> (number: Int, entry: Entry)? in
                for (other, request) in state.travelling
                where !request.names.isDisjoint(with: parents) || !request.parents.isDisjoint(with: names) {
                    state.related.append(
                        "#\(number) \(names.sorted().prefix(4)) (parents \(parents.sorted().prefix(4))) beside #\(other) "
                            + "\(request.names.sorted().prefix(4)) (parents \(request.parents.sorted().prefix(4)))")
                }
                let other = state.travelling.first.map { (number: $0.key, entry: $0.value) }
                state.travelling[number] = entry
                state.most = max(state.most, state.travelling.count)
                if state.travelling.count >= 2 { state.pairs += 1 }
                return other
            }
            defer {
                state.withLock { _ = $0.travelling.removeValue(forKey: number) }
                entry.done.fire()
            }
            var partner = other
            if let other {
                other.entry.partner.withLock { $0 = (number, entry) }
                other.entry.behind.fire()
            } else if await entry.behind.wait(bound: number <= pairedUpTo ? .seconds(10) : pairingBound) {
                partner = entry.partner.withLock { $0 }
            }
            let role: Role
            if let partner {
                role = number < partner.number ? .first : .second
                if role == .first && secondFirst { _ = await partner.entry.done.wait(bound: .seconds(10)) }
            } else {
                role = .alone
            }
            state.withLock { $0.sent.append((number, role, names)) }
            let hook = self.hook.withLock { $0 }
            let fault = try await hook?(number, role, saving, deleting) ?? .none
            if fault != .none { state.withLock { $0.faults.append((number, role, fault)) } }
            if fault == .lostAnswer { state.withLock { $0.lostAnswers += 1 } }
            let result = try await fault.answer(saving, deleting, next)
            state.withLock { state in
                var accepted: Set<String> = []
                for record in saving {
                    switch result.saveResults[record.id] {
                    case .success?: accepted.insert(record.id.name)
                    case .failure(.referenceViolation)?: state.refusals.append("#\(number) \(record.id.name)")
                    default: break
                    }
                }
                for id in deleting {
                    if case .success? = result.deleteResults[id] { accepted.insert(id.name) }
                }
                state.accepted.append((number, accepted))
            }
            return result
        }
    }

    // MARK: - Helpers

    /// The app's own write, on a task of its own (not the engine's).
    static func appWrite(_ database: DatabaseQueue, _ sql: String) async throws {
        try await Task.detached {
            try await database.write { db in
                try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
                try db.execute(sql: sql)
            }
        }.value
    }

    /// Sends until nothing is pending; the errors met on the way.
    @discardableResult
    static func sendUntilDone(_ device: SyncTestDevice, rounds: Int = 8) async throws -> [String] {
        var errors: [String] = []
        for _ in 0..<rounds {
            do { try await device.engine.sendChanges() } catch { errors.append("\(error)") }
            if try await device.pending() == 0 { break }
        }
        return errors
    }

    /// A fresh device fetches everything: its rows are `device`'s, and the cloud holds one
    /// record per row.
    static func expectConverged(
        _ cloud: MockCloud, to device: SyncTestDevice, _ context: String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(try await device.pending() == 0, "\(context): still pending", sourceLocation: sourceLocation)
        let fresh = try await SyncTestDevice("fresh-\(UUID().uuidString.prefix(6))", cloud: cloud)
        try await fresh.engine.fetchChanges()
        let expected = try await device.rows()
        let got = try await fresh.rows()
        #expect(
            got == expected,
            "\(context): missing \(Array(Set(expected).subtracting(got)).sorted().prefix(6)), extra \(Array(Set(got).subtracting(expected)).sorted().prefix(6))",
            sourceLocation: sourceLocation)
        #expect(
            cloud.records(in: zone).count == expected.count,
            "\(context): cloud holds \(cloud.records(in: zone).count) records for \(expected.count) rows", sourceLocation: sourceLocation)
    }

    /// The watch's own promises: never more than two, never related together, no save
    /// refused for a parent the cloud lacked, nothing but modifies while one travels.
    static func expectWellBehaved(
        _ traffic: Traffic, _ context: String, knowledgeIsTheClouds: Bool = true, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let state = traffic.snapshot
        #expect(state.most <= 2, "\(context): \(state.most) requests travelled at once", sourceLocation: sourceLocation)
        #expect(state.outOfTurn.isEmpty, "\(context): \(state.outOfTurn.prefix(4))", sourceLocation: sourceLocation)
        if knowledgeIsTheClouds {
            #expect(state.related.isEmpty, "\(context): related together: \(state.related.prefix(3))", sourceLocation: sourceLocation)
            #expect(
                state.refusals.isEmpty, "\(context): saves before their parents: \(state.refusals.prefix(5))",
                sourceLocation: sourceLocation)
        }
    }

    // MARK: - One of two fails, in each way, in either order

    /// Six transactions of five unrelated games, batches of five: request 1 (g0–g4) and
    /// request 2 (g5–g9) travel together. Each is answered with a fault (a conflict on request
    /// 1 is a real one: another device saved g0 first), and the cloud takes them in either
    /// order. The send reports a failure when either must surface; what the cloud accepted
    /// and the device heard is never sent again; merges, zones and fetches wait until nothing
    /// travels; sends until done converge.
    @Test(
        arguments: [Fault.none, .conflict, .network, .limit, .zone, .quota, .lostAnswer, .batchFailed],
        [Fault.none, .network, .limit, .zone, .quota, .lostAnswer, .batchFailed, .rateLimited])
    func aFaultOnEitherOfTwo(first: Fault, second: Fault) async throws {
        for secondFirst in [false, true] {
            try await faultOnEitherOfTwo(first: first, second: second, secondFirst: secondFirst)
        }
    }

    func faultOnEitherOfTwo(first: Fault, second: Fault, secondFirst: Bool) async throws {
        let context = "first \(first), second \(second), \(secondFirst ? "second answered first" : "first answered first")"
        let cloud = MockCloud()
        let faulted = Mutex<Set<Int>>([])
        let traffic = Traffic(pairedUpTo: 2, secondFirst: secondFirst) { number, _, saving, _ in
            // Only the first pair meets the faults, known by their records (g0–g4 go first,
            // g5–g9 beside them); every later request passes.
            guard number <= 2 else { return .none }
            let names = Set(saving.map(\.id.name))
            let which = names.contains("g0:games") ? 1 : names.contains("g5:games") ? 2 : 0
            guard which != 0, faulted.withLock({ $0.insert(which).inserted }) else { return .none }
            return which == 1 ? first : second
        }
        let phone = try await SyncTestDevice(
            "phone", container: traffic.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: 2)
        for transaction in 0..<6 {
            var sql = ""
            for game in (transaction * 5)..<(transaction * 5 + 5) {
                sql += "INSERT INTO games (id, title, score) VALUES ('g\(game)', 'Game \(game)', \(game));"
            }
            try await Self.appWrite(phone.database, sql)
        }
        if first == .conflict {
            let laptop = try await SyncTestDevice("laptop", cloud: cloud)
            try await laptop.execute("INSERT INTO games (id, title, score) VALUES ('g0', 'laptop', -1)")
            try await laptop.engine.sendChanges()
        }
        var firstError: (any Error)?
        do { try await phone.engine.sendChanges() } catch { firstError = error }
        let afterFirst = traffic.snapshot
        let firstPair = afterFirst.sent.filter { $0.number <= 2 }
        #expect(Set(firstPair.map(\.role)) == [.first, .second], "\(context): \(firstPair)")
        if first.mustSurface || second.mustSurface {
            #expect(
                firstError != nil,
                "\(context): the send returned without reporting the failure; requests \(afterFirst.sent.map { "#\($0.number) \($0.role) \($0.names.sorted())" }), faults \(afterFirst.faults.map { "#\($0.number) \($0.role) \($0.fault)" })"
            )
        }
        // What the cloud accepted and the device heard of during the first send is never
        // sent again: its answer was written.
        let heard = afterFirst.accepted.reduce(into: Set<String>()) { $0.formUnion($1.names) }
            .subtracting(
                afterFirst.faults.filter { $0.fault == .lostAnswer }.flatMap { lost in
                    afterFirst.sent.first { $0.number == lost.number }?.names ?? []
                })
        let errors = try await Self.sendUntilDone(phone)
        let later = traffic.snapshot.sent.filter { $0.number > afterFirst.count }
        let again = later.flatMap { $0.names.intersection(heard) }
        #expect(
            again.isEmpty,
            "\(context): accepted records sent again: \(again.sorted().prefix(6)) (first send: \(String(describing: firstError)))")
        #expect(errors.isEmpty, "\(context): later sends failed: \(errors)")
        Self.expectWellBehaved(traffic, context)
        try await Self.expectConverged(cloud, to: phone, context)
        #expect(cloud.records(in: Self.zone).count == 30, "\(context)")
    }

    /// A quota that stays full, met by every request holding g5–g9, the batch sent beside one
    /// that meets a conflict: the send reports it (`SendFailed` with `isQuotaExceeded`, and
    /// `status.isOverQuota`), and once space is freed everything arrives.
    @Test func aFullQuotaMetBesideAConflictIsReported() async throws {
        let cloud = MockCloud()
        let full = Atomic<Bool>(true)
        let traffic = Traffic(pairedUpTo: 2) { _, _, saving, _ in
            let names = Set(saving.map(\.id.name))
            let over = full.load(ordering: .sequentiallyConsistent) && (5..<10).contains { names.contains("g\($0):games") }
            return over ? .quota : .none
        }
        let phone = try await SyncTestDevice(
            "phone", container: traffic.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: 2)
        for transaction in 0..<4 {
            var sql = ""
            for game in (transaction * 5)..<(transaction * 5 + 5) { sql += "INSERT INTO games (id, title) VALUES ('g\(game)', 'G');" }
            try await Self.appWrite(phone.database, sql)
        }
        let laptop = try await SyncTestDevice("laptop", cloud: cloud)
        try await laptop.execute("INSERT INTO games (id, title, score) VALUES ('g0', 'laptop', -1)")
        try await laptop.engine.sendChanges()
        var failure: (any Error)?
        do { try await phone.engine.sendChanges() } catch { failure = error }
        #expect((failure as? SyncEngineError)?.isQuotaExceeded == true, "\(String(describing: failure))")
        #expect(phone.engine.status.isOverQuota)
        #expect(try await phone.pending() >= 5)
        full.store(false, ordering: .sequentiallyConsistent)
        let errors = try await Self.sendUntilDone(phone)
        #expect(errors.isEmpty, "\(errors)")
        #expect(!phone.engine.status.isOverQuota)
        Self.expectWellBehaved(traffic, "full quota")
        try await Self.expectConverged(cloud, to: phone)
    }

    // MARK: - Deep trees at many batch sizes

    /// Games and players: players moved between games one by one and all at once, games
    /// deleted and inserted again with the same key (in one transaction and in several),
    /// games renamed after their new players, and finally everything deleted and built again
    /// with the same keys in other places. At batch sizes 1, 2, 3, 7 and 400, each ordering.
    @Test(arguments: [1, 2, 3, 7, 400], [false, true])
    func deepTreesAtBatchSizes(batchSize: Int, secondFirst: Bool) async throws {
        let context = "batch \(batchSize)\(secondFirst ? ", second answered first" : "")"
        let cloud = MockCloud()
        let traffic = Traffic(secondFirst: secondFirst)
        let phone = try await SyncTestDevice(
            "phone", container: traffic.container(cloud.container(user: "alice")), batchSize: batchSize, maximumBatchesInFlight: 2)
        let db = phone.database
        // Eight games of five players, each game its own transaction, players first.
        for game in 0..<8 {
            var sql = ""
            for player in 0..<5 { sql += "INSERT INTO players (id, gameID, name) VALUES ('p\(game)_\(player)', 'g\(game)', 'P');" }
            sql += "INSERT INTO games (id, title, score) VALUES ('g\(game)', 'Game \(game)', \(game));"
            try await Self.appWrite(db, sql)
        }
        var errors = try await Self.sendUntilDone(phone)
        #expect(errors.isEmpty, "\(context): \(errors)")

        // Players of g0 move to g1, then g0 goes; a new g0 with new players comes back.
        try await Self.appWrite(db, "UPDATE players SET gameID = 'g1' WHERE gameID = 'g0'")
        try await Self.appWrite(db, "DELETE FROM games WHERE id = 'g0'")
        try await Self.appWrite(
            db,
            "INSERT INTO games (id, title) VALUES ('g0', 'Back');"
                + "INSERT INTO players (id, gameID, name) VALUES ('n0', 'g0', 'New'), ('n1', 'g0', 'New')")
        // In one transaction: g2 deleted and inserted again, g3's players moved under it, g3 deleted.
        try await Self.appWrite(
            db,
            "DELETE FROM games WHERE id = 'g2'; INSERT INTO games (id, title) VALUES ('g2', 'Reborn');"
                + "UPDATE players SET gameID = 'g2' WHERE gameID = 'g3'; DELETE FROM games WHERE id = 'g3';")
        // g4's players leave one by one, each in its own transaction, to g5, g6 and g7; then g4 goes.
        for player in 0..<5 {
            try await Self.appWrite(db, "UPDATE players SET gameID = 'g\(5 + player % 3)' WHERE id = 'p4_\(player)'")
        }
        try await Self.appWrite(db, "DELETE FROM games WHERE id = 'g4'")
        // Every game renamed after all that: parents edited after their new children.
        try await Self.appWrite(db, "UPDATE games SET title = title || ' renamed'")
        // A player moves back and forth, ending where it started.
        try await Self.appWrite(db, "UPDATE players SET gameID = 'g7' WHERE id = 'p6_0'")
        try await Self.appWrite(db, "UPDATE players SET gameID = 'g6' WHERE id = 'p6_0'")
        errors = try await Self.sendUntilDone(phone)
        #expect(errors.isEmpty, "\(context): \(errors)")
        Self.expectWellBehaved(traffic, context)
        try await Self.expectConverged(cloud, to: phone, context)

        // Everything deleted and built again with the same keys, players in other games, in
        // one transaction; then a second game deleted and re-made in each of several.
        var sql = "DELETE FROM games;"
        for game in 0..<8 {
            sql += "INSERT INTO games (id, title, score) VALUES ('g\(game)', 'Again \(game)', \(100 + game));"
        }
        for game in 0..<8 {
            for player in 0..<5 {
                sql += "INSERT INTO players (id, gameID, name) VALUES ('p\(game)_\(player)', 'g\((game + player) % 8)', 'Again');"
            }
        }
        try await Self.appWrite(db, sql)
        for game in [1, 5] {
            try await Self.appWrite(
                db,
                "DELETE FROM games WHERE id = 'g\(game)'; INSERT INTO games (id, title) VALUES ('g\(game)', 'Third');"
                    + "INSERT INTO players (id, gameID, name) VALUES ('q\(game)', 'g\(game)', 'Q')")
        }
        errors = try await Self.sendUntilDone(phone)
        #expect(errors.isEmpty, "\(context): \(errors)")
        Self.expectWellBehaved(traffic, context)
        try await Self.expectConverged(cloud, to: phone, context)
    }

    // MARK: - Whole transactions

    /// Transactions of random sizes up to the batch size, of games with their players and of
    /// moves, at random batch sizes: each transaction's records arrive in one request, and
    /// requests travel together.
    @Test(arguments: Array(UInt64(1)...UInt64(6)))
    func eachTransactionArrivesWhole(seed: UInt64) async throws {
        var random = SeededGenerator(state: seed &* 7919)
        let batchSize = [3, 4, 6, 9][Int.random(in: 0..<4, using: &random)]
        let cloud = MockCloud()
        let traffic = Traffic(secondFirst: Bool.random(using: &random))
        let phone = try await SyncTestDevice(
            "phone", container: traffic.container(cloud.container(user: "alice")), batchSize: batchSize, maximumBatchesInFlight: 2)
        var transactions: [Set<String>] = []
        var next = 0
        for _ in 0..<24 {
            var names: Set<String> = []
            var sql = ""
            let games = Int.random(in: 1...max(1, batchSize / 2), using: &random)
            for _ in 0..<games where names.count < batchSize {
                let game = "t\(next)"
                next += 1
                sql += "INSERT INTO games (id, title) VALUES ('\(game)', 'T');"
                names.insert("\(game):games")
                for player in 0..<Int.random(in: 0...2, using: &random) where names.count < batchSize {
                    sql += "INSERT INTO players (id, gameID, name) VALUES ('\(game)p\(player)', '\(game)', 'P');"
                    names.insert("\(game)p\(player):players")
                }
            }
            try await Self.appWrite(phone.database, sql)
            transactions.append(names)
        }
        let errors = try await Self.sendUntilDone(phone)
        #expect(errors.isEmpty, "\(errors)")
        let sent = traffic.snapshot.sent
        for transaction in transactions {
            let requests = sent.filter { !$0.names.isDisjoint(with: transaction) }.map(\.number)
            #expect(requests.count == 1, "seed \(seed) batch \(batchSize): \(transaction.sorted()) arrived in requests \(requests)")
        }
        Self.expectWellBehaved(traffic, "seed \(seed)")
        try await Self.expectConverged(cloud, to: phone, "seed \(seed)")
    }

    // MARK: - Seeded sequences

    /// A seeded workload of one device: inserts, renames, deletes, deletes and re-inserts of
    /// the same key, moves of players, in transactions of random sizes, at a random batch
    /// size, with faults aimed at the first or second of two requests travelling together (or
    /// any). Each send that met a fault that must surface reports it; afterwards sends
    /// without faults finish without errors, and everything converges.
    /// Seeds 51 and 193 (of the first 200) meet a quota refusal of the second of two
    /// requests that the send never reports (see `aFaultOnEitherOfTwo`).
    @Test(arguments: Array(UInt64(1)...UInt64(30)) + [51, 193])
    func seededOneDevice(seed: UInt64) async throws {
        try await seeded(seed: seed, withLaptop: false)
    }

    /// The same with another device editing the same games between sends and inside requests.
    /// Seed 160 (of 101–180) meets the unreported quota refusal too.
    @Test(arguments: Array(UInt64(101)...UInt64(112)) + [160])
    func seededWithAnotherDevice(seed: UInt64) async throws {
        try await seeded(seed: seed, withLaptop: true)
    }

    static func randomTransaction(_ random: inout SeededGenerator, round: Int, tag: String) -> String {
        var sql = ""
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let game = "g\(Int.random(in: 0..<8, using: &random))"
            let other = "g\(Int.random(in: 0..<8, using: &random))"
            let players = (0..<Int.random(in: 1...4, using: &random)).map { _ in "p\(Int.random(in: 0..<24, using: &random))" }
            let list = players.map { "'\($0)'" }.joined(separator: ", ")
            let exists = "EXISTS (SELECT 1 FROM games WHERE id = '\(game)')"
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1:
                sql += "INSERT OR IGNORE INTO games (id, title, score) VALUES ('\(game)', '\(tag)\(round)', \(round));"
                for player in players {
                    sql +=
                        "INSERT OR REPLACE INTO players (id, gameID, name) SELECT '\(player)', '\(game)', '\(tag)\(round)' WHERE \(exists);"
                }
            case 2: sql += "UPDATE games SET title = '\(tag) renamed \(round)' WHERE id = '\(game)';"
            case 3: sql += "DELETE FROM games WHERE id = '\(game)';"
            case 4:
                sql += "DELETE FROM games WHERE id = '\(game)'; INSERT INTO games (id, title) VALUES ('\(game)', '\(tag) reborn \(round)');"
                sql += "UPDATE players SET gameID = '\(game)' WHERE id IN (\(list)) AND gameID = '\(other)';"
            case 5: sql += "UPDATE players SET gameID = '\(game)' WHERE id IN (\(list)) AND \(exists);"
            case 6: sql += "DELETE FROM players WHERE id IN (\(list));"
            default: sql += "UPDATE players SET name = '\(tag) n\(round)' WHERE id IN (\(list));"
            }
        }
        return sql
    }

    func seeded(seed: UInt64, withLaptop: Bool) async throws {
        var random = SeededGenerator(state: seed)
        let batchSize = [1, 2, 3, 5, 8, 400][Int.random(in: 0..<6, using: &random)]
        let faults: [Fault] = [.network, .limit, .zone, .quota, .lostAnswer, .batchFailed, .rateLimited]
        var plan: [(Fault, Role?)] = []
        for _ in 0..<600 {
            if Int.random(in: 0..<10, using: &random) < 3 {
                let target: Role? = [nil, .first, .second][Int.random(in: 0..<3, using: &random)]
                plan.append((faults[Int.random(in: 0..<faults.count, using: &random)], target))
            } else {
                plan.append((.none, nil))
            }
        }
        let faultPlan = plan
        let faultsOn = Atomic<Bool>(true)
        let laptopBox = Mutex<SyncTestDevice?>(nil)
        let laptopEdits = Mutex<[Int]>([])
        let cloud = MockCloud()
        let time = ManualWallClock()
        let traffic = Traffic(secondFirst: Bool.random(using: &random)) { number, role, _, _ in
            guard faultsOn.load(ordering: .sequentiallyConsistent), number < faultPlan.count else { return .none }
            // Another device edits while some requests travel.
            if number % 5 == 0, let laptop = laptopBox.withLock({ $0 }) {
                laptopEdits.withLock { $0.append(number) }
                try await Task.detached {
                    try await laptop.engine.fetchChanges()
                    try await laptop.execute(
                        "UPDATE games SET title = 'laptop \(number)' WHERE rowid % 2 = \(number % 2);"
                            + "UPDATE players SET name = 'laptop \(number)' WHERE rowid % 3 = 0;"
                            + "DELETE FROM players WHERE id = 'p\(number % 24)';")
                    try await laptop.engine.sendChanges()
                }.value
            }
            let (fault, target) = faultPlan[number]
            guard target == nil || target == role else { return .none }
            return fault
        }
        let phone = try await SyncTestDevice(
            "phone", container: traffic.container(cloud.container(user: "alice")), time: time, batchSize: batchSize,
            maximumBatchesInFlight: 2)
        let laptop = try await SyncTestDevice("laptop", cloud: cloud, time: time)
        if withLaptop { laptopBox.withLock { $0 = laptop } }
        let context = "seed \(seed) batch \(batchSize)"
        var unreported: [String] = []
        for round in 0..<6 {
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                time.advance()
                try await Self.appWrite(phone.database, Self.randomTransaction(&random, round: round, tag: "phone"))
            }
            if withLaptop, Bool.random(using: &random) {
                try await laptop.engine.fetchChanges()
                try await laptop.execute(Self.randomTransaction(&random, round: round, tag: "laptop"))
                _ = try? await laptop.engine.sendChanges()
            }
            let before = traffic.snapshot.faults.count
            var failed = false
            do { try await phone.engine.sendChanges() } catch { failed = true }
            let met = traffic.snapshot.faults.dropFirst(before).filter { $0.fault.mustSurface }
            if !met.isEmpty && !failed {
                unreported.append("round \(round): \(met.map { "#\($0.number) \($0.role) \($0.fault)" })")
            }
        }
        #expect(unreported.isEmpty, "\(context): sends returned without reporting: \(unreported)")
        faultsOn.store(false, ordering: .sequentiallyConsistent)
        laptopBox.withLock { $0 = nil }
        var errors: [String] = []
        for attempt in 0..<6 {
            do { try await phone.engine.syncChanges() } catch { errors.append("phone #\(attempt): \(error)") }
            if withLaptop {
                do { try await laptop.engine.syncChanges() } catch { errors.append("laptop #\(attempt): \(error)") }
            }
            if try await phone.pending() == 0, try await laptop.pending() == 0 { break }
        }
        #expect(errors.isEmpty, "\(context): sends without faults failed: \(errors)")
        try await phone.engine.fetchChanges()
        if withLaptop {
            try await laptop.engine.fetchChanges()
            #expect(try await laptop.rows() == (try await phone.rows()), "\(context)")
        }
        let state = traffic.snapshot
        // The device knows what the cloud knows unless an answer was lost or another device
        // edited: only then may a request meet the cloud's own changes.
        Self.expectWellBehaved(traffic, context, knowledgeIsTheClouds: state.lostAnswers == 0 && !withLaptop)
        #expect(phone.engine.status.quarantinedCount == 0, "\(context)")
        try await Self.expectConverged(cloud, to: phone, context)
    }

    // MARK: - Cancelled and edited while two travel

    /// The send is cancelled when the second of two arrives; the app edits the records of the
    /// first while both travel. Nothing is lost, and later sends converge.
    @Test(arguments: [false, true])
    func cancelledOrEditedWhileTwoTravel(cancel: Bool) async throws {
        let cloud = MockCloud()
        let sender = Mutex<Task<Void, any Error>?>(nil)
        let database = Mutex<DatabaseQueue?>(nil)
        let traffic = Traffic(pairedUpTo: 2) { number, role, _, _ in
            guard number <= 2, role == .second else { return .none }
            if cancel { sender.withLock { $0 }?.cancel() }
            if let database = database.withLock({ $0 }) {
                try await Self.appWrite(
                    database,
                    "UPDATE games SET title = 'edited' WHERE id IN ('g0', 'g1', 'g7');"
                        + "DELETE FROM games WHERE id = 'g2'; INSERT INTO games (id, title) VALUES ('g2', 'again');"
                        + "INSERT INTO players (id, gameID, name) VALUES ('x', 'g2', 'X');")
            }
            return .none
        }
        let phone = try await SyncTestDevice(
            "phone", container: traffic.container(cloud.container(user: "alice")), batchSize: 4, maximumBatchesInFlight: 2)
        database.withLock { $0 = phone.database }
        for transaction in 0..<4 {
            var sql = ""
            for game in (transaction * 4)..<(transaction * 4 + 4) { sql += "INSERT INTO games (id, title) VALUES ('g\(game)', 'G');" }
            try await Self.appWrite(phone.database, sql)
        }
        let task = Task { try await phone.engine.sendChanges() }
        sender.withLock { $0 = task }
        _ = await task.result
        #expect(traffic.snapshot.pairs > 0)
        let errors = try await Self.sendUntilDone(phone)
        #expect(errors.isEmpty, "\(errors)")
        let rows = try await phone.rows()
        #expect(rows.contains("game g0 'edited' NULL"))
        #expect(rows.contains("player x 'g2' 'X'"))
        Self.expectWellBehaved(traffic, "cancel \(cancel)")
        try await Self.expectConverged(cloud, to: phone)
    }
}
