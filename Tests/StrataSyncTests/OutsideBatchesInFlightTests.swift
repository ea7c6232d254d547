import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Synchronization
import Testing

/// An outside tester's attacks on `SyncEngineConfiguration.maximumBatchesInFlight` (Sync.md,
/// "Sending", step 4, "Overlap"), from the documented promises only: up to that many modify
/// requests travel at once (4 by default, 1 one at a time, at least 1), never a parent beside
/// its child (as sent or as the cloud last knew it), a parent always reaches the cloud before
/// its children, when one of those travelling fails the others' answers are still written
/// before the send reports the first failure, what the cloud accepted and the device heard is
/// never sent again, zones and fetches come once nothing travels, each local transaction
/// arrives whole, a request refused whole is named record by record, and a crash with batches
/// in flight loses nothing. Also the new default `fetchPageSize` of 2,000.
@Suite(.timeLimit(.minutes(3)))
struct OutsideBatchesInFlightTests {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    // MARK: - A bounded one-shot signal

    typealias Signal = WatchSignal

    // MARK: - The watch

    /// Watches every modify request of the synced zone: how many travel at once, which travel
    /// beside a parent or child of theirs, which save a child the cloud does not hold the
    /// parent of, what the cloud accepted and the device heard, and which zone or fetch calls
    /// come while one travels. Each request is held until `fill` travel (or a short bound),
    /// and with `reverse` answered only after those that arrived after it.
    final class Watch: PrivateDatabaseWatch {
        typealias Hook =
            @Sendable (
                _ number: Int, _ send: Int, _ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase
            ) async throws -> CloudModifyResult?

        final class Entry: Sendable {
            let number: Int
            let names: Set<String>
            let parents: Set<String>
            let full = Signal()
            let done = Signal()
            init(number: Int, names: Set<String>, parents: Set<String>) {
                self.number = number
                self.names = names
                self.parents = parents
            }
        }

        struct Request: Sendable {
            var number: Int
            var send: Int
            var names: [String]
            var arrived: Int
            var answered: Int?
            var accepted: Set<String> = []
        }

        struct State {
            var count = 0
            var tick = 0
            var send = 0
            var travelling: [Int: Entry] = [:]
            var most = 0
            var related: [String] = []
            var refusals: [String] = []
            var orphans: [String] = []
            var outOfTurn: [String] = []
            var requests: [Int: Request] = [:]
        }

        let state = Mutex(State())
        let hook = Mutex<Hook?>(nil)
        let fill: Int
        let holdBound: Duration
        let reverse: Bool
        /// Requests 1 to `firstWave` are held until all of them travel (for a bound of ten
        /// seconds, which only a send that never launches them together reaches).
        let firstWave: Atomic<Int>
        /// Requests are numbered for `firstWave` and the hook from after this many.
        let base = Atomic<Int>(0)
        let firstWaveArrived = Signal()
        let firstWaveRegistered = Atomic<Int>(0)
        /// Runs once the first wave travels, before any of it goes on to the cloud.
        let onFirstWave = Mutex<(@Sendable (_ next: any CloudDatabase) async throws -> Void)?>(nil)

        init(fill: Int, holdBound: Duration = .milliseconds(60), reverse: Bool = false, firstWave: Int = 0, hook: Hook? = nil) {
            self.fill = fill
            self.holdBound = holdBound
            self.reverse = reverse
            self.firstWave = Atomic(firstWave)
            self.hook.withLock { $0 = hook }
        }

        func container(_ base: any CloudContainer) -> WatchedContainer<Watch> { WatchedContainer(base: base, watch: self) }

        var snapshot: State { state.withLock { $0 } }

        func beginSend(_ send: Int) { state.withLock { $0.send = send } }

        /// Fired at the first zone save, and at the first fetch.
        let zonesSaved = Signal()
        let fetched = Signal()

        /// A zone or fetch call, which must not come while a modify travels.
        func note(_ call: String) {
            state.withLock { state in
                if !state.travelling.isEmpty {
                    state.outOfTurn.append("\(call) while #\(state.travelling.keys.sorted()) travelled")
                }
            }
            if call == "saveZones" { zonesSaved.fire() } else if call.hasPrefix("fetch") { fetched.fire() }
        }

        /// Every name the cloud accepted and the device heard of.
        var acceptedNames: Set<String> { snapshot.requests.values.reduce(into: Set<String>()) { $0.formUnion($1.accepted) } }

        /// Requests that carried a name an earlier request's answer (heard) had accepted: in
        /// any later send, or (when the app edits between sends) in the same send only.
        func resent(acrossSends: Bool = true) -> [String] {
            let requests = snapshot.requests.values.sorted { $0.number < $1.number }
            var found: [String] = []
            for heard in requests {
                guard let answered = heard.answered else { continue }
                for later in requests where later.arrived > answered && (acrossSends || later.send == heard.send) {
                    let again = heard.accepted.intersection(later.names)
                    if !again.isEmpty { found.append("#\(later.number) resent \(again.sorted().prefix(4)) accepted in #\(heard.number)") }
                }
            }
            return found
        }

        func modify(_ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase) async throws -> CloudModifyResult {
            let (number, send, arrived) = state.withLock { state in
                state.count += 1
                state.tick += 1
                return (state.count, state.send, state.tick)
            }
            // The cloud's copies: a save moving a child away from a parent, and a delete, are
            // related to the parent the cloud holds them under.
            let ids = saving.map(\.id) + deleting
            let held = ids.isEmpty ? [:] : try await next.fetchRecords(ids)
            let names = Set(ids.map(\.name))
            let parents = Set(saving.compactMap(\.parent?.name) + held.values.compactMap { try? $0.get().parent?.name })
            // A child saved while the cloud lacks its parent, which is not in this request.
            let savedIDs = Set(saving.map(\.id))
            let outside = Array(Set(saving.compactMap(\.parent).filter { !savedIDs.contains($0) }))
            let parentCopies = outside.isEmpty ? [:] : try await next.fetchRecords(outside)
            let orphans = saving.compactMap { record -> String? in
                guard let parent = record.parent, !savedIDs.contains(parent) else { return nil }
                if case .success? = parentCopies[parent] { return nil }
                return "#\(number) saved \(record.id.name) before its parent \(parent.name) reached the cloud"
            }
            let entry = Entry(number: number, names: names, parents: parents)
            let filled = state.withLock { state -> [Entry] in
                state.orphans += orphans
                for (other, request) in state.travelling
                where !request.names.isDisjoint(with: parents) || !request.parents.isDisjoint(with: names) {
                    state.related.append(
                        "#\(number) \(names.sorted().prefix(3)) beside #\(other) \(request.names.sorted().prefix(3))")
                }
                state.travelling[number] = entry
                state.most = max(state.most, state.travelling.count)
                state.requests[number] = Request(number: number, send: send, names: ids.map(\.name), arrived: arrived)
                return state.travelling.count >= fill ? Array(state.travelling.values) : []
            }
            for full in filled { full.full.fire() }
            let relative = number - base.load(ordering: .sequentiallyConsistent)
            let firstWave = firstWave.load(ordering: .sequentiallyConsistent)
            // The wave is complete once all of its requests are registered as travelling.
            let registered = relative <= firstWave ? firstWaveRegistered.add(1, ordering: .sequentiallyConsistent).newValue : 0
            if relative <= firstWave && registered == firstWave {
                if let action = onFirstWave.withLock({ $0 }) { try await action(next) }
                firstWaveArrived.fire()
            }
            defer {
                state.withLock { _ = $0.travelling.removeValue(forKey: number) }
                entry.done.fire()
            }
            if relative <= firstWave {
                await firstWaveArrived.wait(bound: .seconds(10))
            } else if fill > 1 {
                await entry.full.wait(bound: holdBound)
            }
            if reverse {
                let later = state.withLock { state in state.travelling.values.filter { $0.number > number } }
                for other in later.sorted(by: { $0.number > $1.number }) { await other.done.wait(bound: .seconds(10)) }
            }
            let hook = self.hook.withLock { $0 }
            let result: CloudModifyResult
            if let hook, let answer = try await hook(relative, send, saving, deleting, next) {
                result = answer
            } else {
                result = try await next.modifyRecords(saving: saving, deleting: deleting)
            }
            state.withLock { state in
                state.tick += 1
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
                state.requests[number]?.answered = state.tick
                state.requests[number]?.accepted = accepted
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

    /// SQL inserting games `range` with `players` players each, players first.
    static func gamesSQL(_ range: Range<Int>, players: Int, prefix: String = "g", title: String = "Game") -> String {
        var sql = ""
        for game in range {
            for player in 0..<players {
                sql += "INSERT INTO players (id, gameID, name) VALUES ('\(prefix)\(game)p\(player)', '\(prefix)\(game)', 'P\(player)');"
            }
            sql += "INSERT INTO games (id, title, score) VALUES ('\(prefix)\(game)', '\(title) \(game)', \(game));"
        }
        return sql
    }

    /// Sends until nothing is pending, numbering each send for the watch; the errors met.
    @discardableResult
    static func sendUntilDone(
        _ device: SyncTestDevice, watch: Watch? = nil, from first: Int = 1, rounds: Int = 8
    ) async throws
        -> [String]
    {
        var errors: [String] = []
        for round in 0..<rounds {
            watch?.beginSend(first + round)
            do { try await device.engine.sendChanges() } catch { errors.append("\(error)") }
            if try await device.pending() == 0 { break }
        }
        return errors
    }

    /// A fresh device fetches everything: its rows are `device`'s, and the cloud holds one
    /// record per row.
    static func expectConverged(
        _ cloud: MockCloud, to device: SyncTestDevice, _ context: String, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        #expect(try await device.pending() == 0, "\(context): still pending", sourceLocation: sourceLocation)
        let fresh = try await SyncTestDevice("fresh-\(UUID().uuidString.prefix(6))", cloud: cloud)
        try await fresh.engine.fetchChanges()
        let expected = try await device.rows()
        let got = try await fresh.rows()
        #expect(
            got == expected,
            "\(context): missing \(Set(expected).subtracting(got).sorted().prefix(6)), extra \(Set(got).subtracting(expected).sorted().prefix(6))",
            sourceLocation: sourceLocation)
        #expect(
            cloud.records(in: zone).count == expected.count,
            "\(context): cloud holds \(cloud.records(in: zone).count) records for \(expected.count) rows", sourceLocation: sourceLocation)
    }

    /// The watch's promises: never more than `depth`, never related together, no child before
    /// its parent, no zone or fetch call while one travels, nothing heard as accepted sent again.
    static func expectWellBehaved(
        _ watch: Watch, depth: Int, _ context: String, resends: Bool = true, acrossSends: Bool = true,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let state = watch.snapshot
        #expect(state.most <= depth, "\(context): \(state.most) requests travelled at once", sourceLocation: sourceLocation)
        #expect(state.related.isEmpty, "\(context): related together: \(state.related.prefix(3))", sourceLocation: sourceLocation)
        #expect(state.orphans.isEmpty, "\(context): \(state.orphans.prefix(3))", sourceLocation: sourceLocation)
        #expect(
            state.refusals.isEmpty, "\(context): refused for a missing parent: \(state.refusals.prefix(4))", sourceLocation: sourceLocation)
        #expect(state.outOfTurn.isEmpty, "\(context): \(state.outOfTurn.prefix(3))", sourceLocation: sourceLocation)
        if resends {
            let resent = watch.resent(acrossSends: acrossSends)
            #expect(resent.isEmpty, "\(context): \(resent.prefix(3))", sourceLocation: sourceLocation)
        }
    }

    static func name(_ key: String, _ table: String = "games") -> String { "\(key):\(table)" }

    // MARK: - Defaults

    /// The defaults the documentation names: four batches in flight, pages of 2,000. An
    /// engine made with the default configuration keeps four requests travelling and asks for
    /// pages of 2,000 records.
    @Test func theDefaultsAreFourInFlightAndPagesOf2000() async throws {
        let defaults = SyncEngineConfiguration()
        #expect(defaults.maximumBatchesInFlight == 4)
        #expect(defaults.fetchPageSize == 2_000)
        #expect(defaults.batchSize == 400)

        let cloud = MockCloud()
        let watch = Watch(fill: 4, holdBound: .milliseconds(20), firstWave: 4)
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let configuration = SyncEngineConfiguration(deviceID: "phone", schedule: nil)
        let container = watch.container(cloud.container(user: "alice"))
        let engine = try await runOnBackgroundThread {
            try SyncEngine(
                for: database, tableNames: SyncTestDevice.tableNames, container: container, configuration: configuration,
                startImmediately: false)
        }
        // 4,500 games: twelve batches of 400 (the last under it). One row named twice in the
        // log, so that it drains whole before the first request (Sync.md, "Drain").
        try await Self.appWrite(database, Self.gamesSQL(0..<4_500, players: 0))
        try await Self.appWrite(database, "UPDATE games SET score = -1 WHERE id = 'g0'")
        try await engine.sendChanges()
        let state = watch.snapshot
        #expect(state.most == 4, "the default depth kept \(state.most) requests travelling")
        #expect(state.requests.values.allSatisfy { $0.names.count <= 400 })
        #expect(try await engine.pendingCount() == 0)
        #expect(cloud.records(in: Self.zone).count == 4_500)

        // A fresh engine with the default configuration fetches pages of 2,000.
        let limits = Mutex<[Int]>([])
        let reader = InterceptingContainer(
            base: cloud.container(user: "alice"),
            modify: { saving, deleting, next in try await next.modifyRecords(saving: saving, deleting: deleting) },
            fetchZone: { zone, token, limit, next in
                if zone.name == Self.zone.name { limits.withLock { $0.append(limit) } }
                return try await next.fetchZoneChanges(zone, since: token, limit: limit)
            })
        let freshDatabase = try DatabaseQueue()
        try await freshDatabase.write { db in try db.execute(sql: SyncTestDevice.schemaSQL) }
        let freshConfiguration = SyncEngineConfiguration(deviceID: "laptop", schedule: nil)
        let fresh = try await runOnBackgroundThread {
            try SyncEngine(
                for: freshDatabase, tableNames: SyncTestDevice.tableNames, container: reader, configuration: freshConfiguration,
                startImmediately: false)
        }
        try await fresh.fetchChanges()
        let asked = limits.withLock { $0 }
        #expect(!asked.isEmpty && asked.allSatisfy { $0 == 2_000 }, "pages asked for: \(asked)")
        #expect(asked.count >= 3, "4,500 records in pages of 2,000: \(asked)")
        let count = try await freshDatabase.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM games") }
        #expect(count == 4_500)
    }

    // MARK: - The depth

    /// One transaction larger than a batch, at each depth and batch size: every request but
    /// the last is full, so batches go beside each other. Each request is held until one more
    /// than the depth travels (or a short bound): never more than the depth travel, the depth
    /// is reached, and each record is sent exactly once.
    @Test(arguments: [1, 2, 3, 5, 8], [1, 2, 3, 5])
    func neverMoreThanTheDepthAndTheDepthIsReached(depth: Int, batchSize: Int) async throws {
        let context = "depth \(depth), batch \(batchSize)"
        let cloud = MockCloud()
        let watch = Watch(fill: depth + 1, holdBound: .milliseconds(100))
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: batchSize, maximumBatchesInFlight: depth)
        let count = batchSize * (2 * depth + 1) + (batchSize - 1)
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<count, players: 0))
        try await phone.engine.sendChanges()
        let state = watch.snapshot
        #expect(state.most == depth, "\(context): \(state.most) travelled at once")
        let sent = state.requests.values.flatMap(\.names)
        #expect(sent.count == count, "\(context): \(sent.count) records sent for \(count)")
        #expect(Set(sent).count == count, "\(context)")
        #expect(state.requests.values.allSatisfy { $0.names.count <= batchSize }, "\(context)")
        Self.expectWellBehaved(watch, depth: depth, context)
        try await Self.expectConverged(cloud, to: phone, context)
    }

    /// Larger batches, as apps send them (the default is 400), with `depth + 2` full batches
    /// waiting. When the log drains whole before the first request (one row is named twice in
    /// it), the first `depth` requests travel together. On a first upload whose log drains as
    /// the send goes (Sync.md, "Drain"), requests still go beside each other, though not
    /// necessarily `depth` of them (at a batch of 400 and a depth of 4, three went together).
    @Test(arguments: [50, 200, 400], [2, 4, 8])
    func theDepthIsReachedWithLargeBatches(batchSize: Int, depth: Int) async throws {
        for drainsWhole in [true, false] {
            let context = "depth \(depth), batch \(batchSize)\(drainsWhole ? "" : ", drained as it goes")"
            let cloud = MockCloud()
            let watch = Watch(fill: depth, holdBound: .milliseconds(20), firstWave: drainsWhole ? depth : 2)
            let phone = try await SyncTestDevice(
                "phone", container: watch.container(cloud.container(user: "alice")), batchSize: batchSize,
                maximumBatchesInFlight: depth)
            try await Self.appWrite(phone.database, Self.gamesSQL(0..<(batchSize * (depth + 2)), players: 0))
            if drainsWhole { try await Self.appWrite(phone.database, "UPDATE games SET score = -1 WHERE id = 'g0'") }
            try await phone.engine.sendChanges()
            let state = watch.snapshot
            let shape = state.requests.values.sorted { $0.number < $1.number }.map {
                "\($0.names.count)@\($0.arrived)-\($0.answered ?? -1)"
            }
            if drainsWhole {
                #expect(state.most == depth, "\(context): \(state.most) travelled at once; requests (size@arrived-answered) \(shape)")
            } else {
                #expect(state.most >= 2, "\(context): \(state.most) travelled at once; requests (size@arrived-answered) \(shape)")
            }
            Self.expectWellBehaved(watch, depth: depth, context)
            try await Self.expectConverged(cloud, to: phone, context)
        }
    }

    /// A depth under one (which the documentation says it is at least) or far above the work:
    /// the send neither hangs nor traps; it sends everything, and a depth under one sends one
    /// request at a time.
    @Test(arguments: [0, -1, -1_000, Int.min, 1_000_000, Int.max])
    func aDepthOutsideTheUsualRange(depth: Int) async throws {
        let cloud = MockCloud()
        let watch = Watch(fill: 2, holdBound: .milliseconds(30))
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 3, maximumBatchesInFlight: depth)
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<20, players: 1))
        // The send on a task of its own, raced with a bound: a send that waits for a slot that
        // never frees shows as a timeout, not a stuck suite.
        let finished = Signal()
        let outcome = Mutex<String?>(nil)
        let send = Task {
            do { try await phone.engine.sendChanges() } catch { outcome.withLock { $0 = "\(error)" } }
            finished.fire()
        }
        let done = await finished.wait(bound: .seconds(30))
        #expect(done, "depth \(depth): the send never finished")
        guard done else {
            send.cancel()
            return
        }
        #expect(outcome.withLock { $0 } == nil, "depth \(depth): \(outcome.withLock { $0 } ?? "")")
        let state = watch.snapshot
        if depth < 1 {
            #expect(state.most == 1, "depth \(depth): \(state.most) travelled at once")
        } else {
            #expect(state.most >= 2, "depth \(depth): \(state.most) travelled at once")
        }
        Self.expectWellBehaved(watch, depth: max(depth, 1), "depth \(depth)")
        try await Self.expectConverged(cloud, to: phone, "depth \(depth)")
    }

    // MARK: - Transactions

    /// Forty transactions of random sizes up to the batch size (the first three exactly a
    /// batch, so requests go beside each other), games and their players inserted players
    /// first: each transaction's records arrive in one request, whatever the depth.
    @Test(arguments: 1...8)
    func eachTransactionArrivesWholeAtAnyDepth(seed: UInt64) async throws {
        var random = SeededGenerator(state: seed)
        let depth = [2, 3, 5, 8][Int(seed) % 4]
        let batchSize = [2, 3, 4, 5, 7][Int(seed) % 5]
        let context = "seed \(seed), depth \(depth), batch \(batchSize)"
        let cloud = MockCloud()
        let watch = Watch(fill: depth, holdBound: .milliseconds(30), reverse: seed % 2 == 0, firstWave: 2)
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: batchSize, maximumBatchesInFlight: depth)
        var transactions: [Set<String>] = []
        for index in 0..<40 {
            let size = index < 3 || Bool.random(using: &random) ? batchSize : Int.random(in: 1...batchSize, using: &random)
            var sql = ""
            var names: Set<String> = []
            var left = size
            var game = 0
            while left > 0 {
                let key = "t\(index)g\(game)"
                let players = Int.random(in: 0...(left - 1), using: &random)
                for player in 0..<players {
                    sql += "INSERT INTO players (id, gameID, name) VALUES ('\(key)p\(player)', '\(key)', 'P');"
                    names.insert(Self.name("\(key)p\(player)", "players"))
                }
                sql += "INSERT INTO games (id, title) VALUES ('\(key)', 'T');"
                names.insert(Self.name(key))
                left -= players + 1
                game += 1
            }
            try await Self.appWrite(phone.database, sql)
            transactions.append(names)
        }
        watch.beginSend(1)
        try await phone.engine.sendChanges()
        let requests = watch.snapshot.requests.values
        for (index, names) in transactions.enumerated() {
            let carrying = requests.filter { !names.isDisjoint(with: $0.names) }
            #expect(
                carrying.count == 1 && names.isSubset(of: carrying[0].names),
                "\(context): transaction \(index) (\(names.count) records) split over \(carrying.map(\.number))")
        }
        #expect(watch.snapshot.most >= 2, "\(context): no two requests ever travelled together")
        Self.expectWellBehaved(watch, depth: depth, context)
        try await Self.expectConverged(cloud, to: phone, context)
    }

    // MARK: - Parents and children

    /// Games and players at depths 2, 4 and 8, batch sizes 1, 2, 3 and 5, the cloud answering
    /// in the order sent or the reverse: children inserted before their parents in one large
    /// transaction and in small ones; then players moved between games and games deleted (in
    /// one transaction and apart), a game renamed after its new players, a player moved under
    /// a new game; then everything deleted and built again with the same keys in other
    /// places. Never a parent beside its child, never a child before its parent reached the
    /// cloud, never more than the depth.
    @Test(arguments: [2, 4, 8], [1, 2, 3, 5])
    func parentsAlwaysReachTheCloudBeforeTheirChildren(depth: Int, batchSize: Int) async throws {
        for reverse in [false, true] {
            let context = "depth \(depth), batch \(batchSize)\(reverse ? ", reverse" : "")"
            let cloud = MockCloud()
            let watch = Watch(fill: depth, holdBound: .milliseconds(15), reverse: reverse)
            let phone = try await SyncTestDevice(
                "phone", container: watch.container(cloud.container(user: "alice")), batchSize: batchSize,
                maximumBatchesInFlight: depth)
            try await Self.appWrite(phone.database, Self.gamesSQL(0..<8, players: 3))
            for game in 8..<12 { try await Self.appWrite(phone.database, Self.gamesSQL(game..<(game + 1), players: 2)) }
            // Players written before their game, then moved under it once it exists.
            try await Self.appWrite(
                phone.database, "INSERT INTO players (id, gameID, name) VALUES ('early0', NULL, 'E'), ('early1', NULL, 'E')")
            try await Self.appWrite(phone.database, "INSERT INTO games (id, title) VALUES ('g12', 'Late parent')")
            try await Self.appWrite(phone.database, "UPDATE players SET gameID = 'g12' WHERE id LIKE 'early%'")
            var errors = try await Self.sendUntilDone(phone, watch: watch, from: 1)
            #expect(errors.isEmpty, "\(context): \(errors.prefix(2))")
            Self.expectWellBehaved(watch, depth: depth, "\(context), first", acrossSends: false)
            try await Self.expectConverged(cloud, to: phone, "\(context), first")

            try await Self.appWrite(
                phone.database, "UPDATE players SET gameID = 'g7' WHERE gameID IN ('g0', 'g1'); DELETE FROM games WHERE id IN ('g0', 'g1')")
            try await Self.appWrite(phone.database, "DELETE FROM games WHERE id = 'g2'")
            try await Self.appWrite(phone.database, "UPDATE players SET gameID = 'g4' WHERE gameID = 'g3'")
            try await Self.appWrite(phone.database, "DELETE FROM games WHERE id = 'g3'")
            try await Self.appWrite(
                phone.database,
                "INSERT INTO games (id, title) VALUES ('g20', 'New'); UPDATE players SET gameID = 'g20' WHERE gameID = 'g5'")
            try await Self.appWrite(phone.database, "UPDATE games SET title = 'Renamed' WHERE id IN ('g20', 'g6', 'g12')")
            try await Self.appWrite(phone.database, "UPDATE players SET gameID = 'g12' WHERE gameID = 'g8'")
            try await Self.appWrite(phone.database, "DELETE FROM games WHERE id = 'g8'")
            errors = try await Self.sendUntilDone(phone, watch: watch, from: 10)
            #expect(errors.isEmpty, "\(context): \(errors.prefix(2))")
            Self.expectWellBehaved(watch, depth: depth, "\(context), moves", acrossSends: false)
            try await Self.expectConverged(cloud, to: phone, "\(context), moves")

            try await Self.appWrite(
                phone.database,
                "DELETE FROM players; DELETE FROM games;"
                    + Self.gamesSQL(0..<6, players: 0) + "INSERT INTO players (id, gameID, name) VALUES "
                    + "('g4p0', 'g0', 'x'), ('g4p1', 'g1', 'x'), ('g6p0', 'g2', 'x'), ('early0', 'g3', 'x'), ('g9p1', 'g5', 'x')")
            errors = try await Self.sendUntilDone(phone, watch: watch, from: 20)
            #expect(errors.isEmpty, "\(context): \(errors.prefix(2))")
            Self.expectWellBehaved(watch, depth: depth, "\(context), rebuilt", acrossSends: false)
            try await Self.expectConverged(cloud, to: phone, "\(context), rebuilt")
        }
    }

    // MARK: - Failures among many travelling

    /// How the cloud answers one request.
    enum Fault: String, CaseIterable, Sendable, CustomStringConvertible {
        case network, lostAnswer, limit, zone, quota, conflict, cancelled, rateLimited
        var description: String { rawValue }

        /// Whether a send meeting it must end with an error.
        var mustSurface: Bool { [.network, .lostAnswer, .quota, .cancelled, .rateLimited].contains(self) }

        func answer(_ saving: [CloudRecord], _ deleting: [CloudRecordID], _ next: any CloudDatabase) async throws -> CloudModifyResult {
            switch self {
            case .network: throw CloudError.networkFailure
            case .lostAnswer:
                _ = try await next.modifyRecords(saving: saving, deleting: deleting)
                throw CloudError.networkFailure
            case .limit: throw CloudError.limitExceeded
            case .zone: throw CloudError.zoneNotFound(OutsideBatchesInFlightTests.zone)
            case .quota: throw CloudError.quotaExceeded
            case .cancelled: throw CancellationError()
            case .rateLimited: throw CloudError.requestRateLimited(retryAfter: .milliseconds(1))
            case .conflict:
                // The request's first record reaches the cloud just before it (as a lost
                // answer would have left it): its save then meets the cloud's copy.
                if let first = saving.first { _ = try await next.modifyRecords(saving: [first], deleting: []) }
                return try await next.modifyRecords(saving: saving, deleting: deleting)
            }
        }
    }

    /// Which of the first wave's requests (by arrival) fail, and how.
    struct Scenario: Sendable, CustomTestStringConvertible {
        var depth: Int
        var faults: [Int: Fault]
        var reverse: Bool
        var testDescription: String {
            "depth \(depth): " + faults.sorted { $0.key < $1.key }.map { "#\($0.key) \($0.value)" }.joined(separator: ", ")
                + (reverse ? ", reverse" : "")
        }

        static let cases: [Scenario] = {
            var cases: [Scenario] = []
            for depth in [3, 8] {
                for fault in Fault.allCases {
                    for position in Set([1, (depth + 1) / 2, depth]).sorted() {
                        for reverse in [false, true] { cases.append(Scenario(depth: depth, faults: [position: fault], reverse: reverse)) }
                    }
                }
            }
            let pairs: [(Int, [Int: Fault])] = [
                (4, [1: .network, 4: .quota]), (4, [1: .quota, 4: .network]), (5, [3: .limit, 5: .zone]),
                (5, [1: .conflict, 3: .lostAnswer]), (4, [1: .limit, 4: .limit]),
                (4, [1: .network, 2: .network, 3: .network, 4: .network]),
                (8, [2: .zone, 7: .conflict]), (8, [1: .lostAnswer, 8: .lostAnswer]), (5, [2: .quota, 4: .quota]),
                (8, [1: .cancelled, 5: .limit]),
            ]
            for (depth, faults) in pairs {
                for reverse in [false, true] { cases.append(Scenario(depth: depth, faults: faults, reverse: reverse)) }
            }
            return cases
        }()
    }

    /// 2 × depth + 3 unrelated games in one transaction (batches of five): the first `depth`
    /// requests travel together, and the chosen ones fail. The send reports a failure that
    /// must surface (a quota alone names each record of its request); once it ends, every
    /// answer the device heard is written (nothing it heard as accepted is pending or sent
    /// again); zones and fetches wait until nothing travels; sends until done converge.
    ///
    /// Found at 7fba583 (depth 5, request 3 over the limit and request 5 without its zone): the
    /// lost zone of request 5 ended the send with `sendFailed` (zoneNotFound) for its five
    /// records; a first mend made the zone again while requests 6 and 7 still travelled.
    @Test(arguments: Scenario.cases)
    func failuresAmongTheRequestsTravelling(scenario: Scenario) async throws {
        try await failuresAmong(scenario: scenario)
    }

    func failuresAmong(scenario: Scenario) async throws {
        let context = scenario.testDescription
        let cloud = MockCloud()
        let faulted = Mutex<[Int: Fault]>([:])
        let conflicted = Mutex<Set<String>>([])
        let watch = Watch(fill: scenario.depth, holdBound: .milliseconds(20), reverse: scenario.reverse, firstWave: scenario.depth) {
            number, send, saving, deleting, next in
            guard send == 0, let fault = scenario.faults[number] else { return nil }
            faulted.withLock { $0[number] = fault }
            if fault == .conflict, let first = saving.first { conflicted.withLock { _ = $0.insert(first.id.name) } }
            return try await fault.answer(saving, deleting, next)
        }
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 5,
            maximumBatchesInFlight: scenario.depth)
        let count = 5 * (2 * scenario.depth) + 3
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<count, players: 0))
        watch.beginSend(0)
        var failure: (any Error)?
        do { try await phone.engine.sendChanges() } catch { failure = error }
        let first = watch.snapshot
        #expect(first.most == scenario.depth, "\(context): \(first.most) travelled at once")
        let met = faulted.withLock { $0 }
        #expect(met == scenario.faults, "\(context): faults met \(met)")
        if scenario.faults.values.contains(where: \.mustSurface) {
            #expect(failure != nil, "\(context): the failure did not reach the caller")
        } else {
            #expect(failure == nil, "\(context): \(String(describing: failure))")
        }
        if Set(scenario.faults.values) == [.quota] {
            // A request refused whole is named record by record.
            let refused = Set(scenario.faults.keys.flatMap { first.requests[$0]?.names ?? [] })
            if case .sendFailed(let failures)? = failure as? SyncEngineError {
                #expect(refused.isSubset(of: Set(failures.keys)), "\(context): named \(failures.keys.sorted().prefix(6))")
                #expect(failures.values.allSatisfy { $0 == .quotaExceeded }, "\(context): \(failures)")
            } else {
                Issue.record("\(context): expected sendFailed, got \(String(describing: failure))")
            }
        }
        // Every answer heard is written before the send ends: nothing heard as accepted waits.
        // (A record met as a conflict of equal versions may be settled by its merge alone.)
        let heard = watch.acceptedNames
        let settled = heard.union(conflicted.withLock { $0 })
        let pending = try await phone.pending()
        #expect(
            (count - settled.count)...(count - heard.count) ~= pending,
            "\(context): \(pending) pending, \(count - heard.count) not heard as accepted")
        let errors = try await Self.sendUntilDone(phone, watch: watch, from: 1)
        #expect(errors.isEmpty, "\(context): later sends: \(errors.prefix(2))")
        Self.expectWellBehaved(watch, depth: scenario.depth, context)
        try await Self.expectConverged(cloud, to: phone, context)
    }

    // MARK: - Two answers that need more than writing

    /// Two requests travel; each meets an answer that needs more than writing (a limit, a
    /// lost zone, a conflict), in either order of answering. Sync.md: `limitExceeded` halves
    /// and retries, `zoneNotFound` creates the zone again and resends, a conflict merges and
    /// resends, and these are handled once nothing travels. None of them is a failure to
    /// report: the send ends with nothing pending and no error.
    @Test(arguments: [Fault.limit, .zone, .conflict], [Fault.limit, .zone, .conflict])
    func twoAnswersThatNeedMoreThanWriting(first: Fault, second: Fault) async throws {
        // At 7fba583 a lost zone taken beside another answer ended the send with `sendFailed`.
        try await twoAnswers(first: first, second: second)
    }

    func twoAnswers(first: Fault, second: Fault) async throws {
        for reverse in [false, true] {
            let context = "#1 \(first), #2 \(second)\(reverse ? ", reverse" : "")"
            let cloud = MockCloud()
            let watch = Watch(fill: 2, holdBound: .milliseconds(20), reverse: reverse, firstWave: 2) {
                number, send, saving, deleting, next in
                guard send == 0, number <= 2 else { return nil }
                return try await (number == 1 ? first : second).answer(saving, deleting, next)
            }
            let phone = try await SyncTestDevice(
                "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: 2)
            try await Self.appWrite(phone.database, Self.gamesSQL(0..<20, players: 0))
            watch.beginSend(0)
            var failure: (any Error)?
            do { try await phone.engine.sendChanges() } catch { failure = error }
            #expect(failure == nil, "\(context): \(String(describing: failure))")
            #expect(try await phone.pending() == 0, "\(context)")
            #expect(watch.snapshot.most == 2, "\(context)")
            try await Self.sendUntilDone(phone, watch: watch)
            Self.expectWellBehaved(watch, depth: 2, context)
            try await Self.expectConverged(cloud, to: phone, context)
        }
    }

    /// The zone is deleted (by hand, another device's reset) while `depth` requests travel,
    /// before any of them reaches the cloud: every one of them meets `zoneNotFound`. Sync.md:
    /// the zone is created again and the batch resent, once nothing travels. The send ends
    /// without an error and everything arrives.
    @Test(arguments: [2, 4, 8])
    func theZoneIsDeletedWhileRequestsTravel(depth: Int) async throws {
        let context = "depth \(depth)"
        let cloud = MockCloud()
        let watch = Watch(fill: depth, holdBound: .milliseconds(20), firstWave: depth)
        watch.onFirstWave.withLock { $0 = { next in try await next.deleteZones([Self.zone]) } }
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: depth)
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<(5 * depth + 3), players: 0))
        watch.beginSend(0)
        var failure: (any Error)?
        do { try await phone.engine.sendChanges() } catch { failure = error }
        #expect(watch.snapshot.most == depth, "\(context): \(watch.snapshot.most)")
        #expect(failure == nil, "\(context): \(String(describing: failure))")
        #expect(try await phone.pending() == 0, "\(context)")
        try await Self.sendUntilDone(phone, watch: watch)
        Self.expectWellBehaved(watch, depth: depth, context)
        try await Self.expectConverged(cloud, to: phone, context)
    }

    /// The zone is deleted while four travel, and the cloud answers requests 3 and 4 slowly
    /// (they wait for a zone save, or a bound): every request meets `zoneNotFound` record by
    /// record, as the cloud answers it. The zone is made again only once nothing travels
    /// (Sync.md: "answers that need more than writing (a merge, a zone, a fetch) are handled
    /// once nothing travels"), and everything arrives.
    @Test func theZoneIsMadeAgainOnlyOnceNothingTravels() async throws {
        let cloud = MockCloud()
        let watch = Watch(fill: 4, holdBound: .milliseconds(20), firstWave: 4)
        watch.hook.withLock {
            $0 = { number, send, _, _, _ in
                if send == 0, number >= 3 { await watch.zonesSaved.wait(bound: .milliseconds(300)) }
                return nil
            }
        }
        watch.onFirstWave.withLock { $0 = { next in try await next.deleteZones([Self.zone]) } }
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: 4)
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<23, players: 0))
        watch.beginSend(0)
        var failure: (any Error)?
        do { try await phone.engine.sendChanges() } catch { failure = error }
        #expect(watch.snapshot.most == 4)
        #expect(failure == nil, "\(String(describing: failure))")
        try await Self.sendUntilDone(phone, watch: watch)
        Self.expectWellBehaved(watch, depth: 4, "zone deleted")
        try await Self.expectConverged(cloud, to: phone, "zone deleted")
    }

    /// A parent's delete travels second of four, beside a request that meets a conflict; the
    /// cloud still holds a child of it this device never saw (another device added it), so the
    /// delete is refused and the engine must fetch. Requests 3 and 4 are answered slowly (they
    /// wait for a fetch, or a bound): the fetch comes only once nothing travels, and the
    /// devices converge.
    ///
    /// Found at 7fba583 (depths 2 and 4, with or without the conflict and the slow answers):
    /// the refused delete of G0 and its four players went again, whole, round after round;
    /// the child was never fetched, the send ended with `sendStalled`, and later sends never
    /// converged. At a depth of 1 a later transaction happened to keep the delete out of the
    /// players' request. Then, with the conflict, the child's delete (fetched) travelled beside
    /// the parent's: the device did not know its parent.
    @Test(arguments: [
        (1, false, false), (2, false, false), (2, true, false), (4, false, false), (4, true, false), (4, false, true), (4, true, true),
    ])
    func aFetchAnAnswerNeedsWaitsUntilNothingTravels(depth: Int, conflict: Bool, slow: Bool) async throws {
        try await fetchAnAnswerNeeds(depth: depth, conflict: conflict, slow: slow)
    }

    func fetchAnAnswerNeeds(depth: Int, conflict: Bool, slow: Bool) async throws {
        let cloud = MockCloud()
        let watch = Watch(fill: depth, holdBound: .milliseconds(20))
        watch.hook.withLock {
            $0 = { number, send, saving, deleting, next in
                guard send == 0, depth > 1 else { return nil }
                if number == 1 && conflict { return try await Fault.conflict.answer(saving, deleting, next) }
                if number >= 3 && slow { await watch.fetched.wait(bound: .milliseconds(300)) }
                return nil
            }
        }
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: depth)
        try await Self.appWrite(
            phone.database, Self.gamesSQL(0..<5, players: 0, prefix: "a") + Self.gamesSQL(0..<1, players: 4, prefix: "G"))
        watch.beginSend(-1)
        try await phone.engine.sendChanges()
        let laptop = try await SyncTestDevice("laptop", cloud: cloud)
        try await laptop.engine.fetchChanges()
        try await laptop.execute("INSERT INTO players (id, gameID, name) VALUES ('G0unseen', 'G0', 'laptop')")
        try await laptop.engine.sendChanges()
        // Four transactions of five: a0–a4 renamed, G0 deleted (its four players with it), ten new games.
        try await Self.appWrite(phone.database, "UPDATE games SET title = 'renamed' WHERE id LIKE 'a%'")
        try await Self.appWrite(phone.database, "DELETE FROM games WHERE id = 'G0'")
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<5, players: 0, prefix: "n"))
        try await Self.appWrite(phone.database, Self.gamesSQL(5..<10, players: 0, prefix: "n"))
        let before = watch.snapshot.count
        watch.base.store(before, ordering: .sequentiallyConsistent)
        watch.firstWave.store(depth > 1 ? 4 : 0, ordering: .sequentiallyConsistent)
        watch.beginSend(0)
        var failure: (any Error)?
        do { try await phone.engine.sendChanges() } catch { failure = error }
        let state = watch.snapshot
        let first = state.requests.values.filter { $0.number > before }.sorted { $0.number < $1.number }.map { $0.names.sorted().prefix(2) }
        #expect(state.most == depth, "depth \(depth), requests: \(first)")
        #expect(failure == nil, "depth \(depth), conflict \(conflict), slow \(slow): \(String(describing: failure))")
        try await Self.sendUntilDone(phone, watch: watch, rounds: 3)
        Self.expectWellBehaved(watch, depth: depth, "depth \(depth), unseen child", acrossSends: false)
        try await laptop.engine.fetchChanges()
        #expect(try await laptop.rows() == (try await phone.rows()))
        #expect(!(try await phone.rows()).contains { $0.contains("G0") })
    }

    /// Five travel; request 3 is over the cloud's limit and request 5 finds no zone (thrown
    /// whole); requests 6 and 7, launched meanwhile, are answered slowly (they wait for a
    /// zone save, or a bound). Sync.md: the zone is made again and the batch resent, once
    /// nothing travels; nothing is reported.
    ///
    /// Found at 7fba583: the send ended with `sendFailed` (zoneNotFound) naming request 5's
    /// records; a first mend made the zone while requests 6 and 7 travelled.
    @Test func theZoneOfARequestBesideOthersIsMadeOnceNothingTravels() async throws {
        do {
            let cloud = MockCloud()
            let watch = Watch(fill: 5, holdBound: .milliseconds(20), firstWave: 5)
            watch.hook.withLock {
                $0 = { number, send, saving, deleting, next in
                    guard send == 0 else { return nil }
                    if number == 3 { return try await Fault.limit.answer(saving, deleting, next) }
                    if number == 5 { return try await Fault.zone.answer(saving, deleting, next) }
                    if number > 5 { await watch.zonesSaved.wait(bound: .milliseconds(300)) }
                    return nil
                }
            }
            let phone = try await SyncTestDevice(
                "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: 5)
            try await Self.appWrite(phone.database, Self.gamesSQL(0..<53, players: 0))
            watch.beginSend(0)
            var failure: (any Error)?
            do { try await phone.engine.sendChanges() } catch { failure = error }
            #expect(watch.snapshot.most == 5)
            #expect(failure == nil, "\(String(describing: failure))")
            try await Self.sendUntilDone(phone, watch: watch)
            Self.expectWellBehaved(watch, depth: 5, "zone of request 5")
            try await Self.expectConverged(cloud, to: phone, "zone of request 5")
        }
    }

    // MARK: - The cloud's limit drops while eight travel

    /// Eight requests of five travel; while the first is answered, the cloud's item limit
    /// drops to two: several of those travelling meet `limitExceeded` at once. The send
    /// finishes (a limit halves the batch), nothing is sent twice once heard, and everything
    /// arrives.
    @Test(arguments: [false, true])
    func theLimitDropsWhileEightTravel(reverse: Bool) async throws {
        let context = reverse ? "reverse" : "in order"
        let cloud = MockCloud()
        let lowered = Atomic<Bool>(false)
        let watch = Watch(fill: 8, holdBound: .milliseconds(20), reverse: reverse, firstWave: 8) { _, _, _, _, _ in
            if !lowered.exchange(true, ordering: .sequentiallyConsistent) {
                var limits = cloud.limits
                limits.maximumItemsPerRequest = 2
                cloud.limits = limits
            }
            return nil
        }
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 5, maximumBatchesInFlight: 8)
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<60, players: 0))
        watch.beginSend(0)
        var failure: (any Error)?
        do { try await phone.engine.sendChanges() } catch { failure = error }
        #expect(failure == nil, "\(context): \(String(describing: failure))")
        #expect(watch.snapshot.most == 8, "\(context): \(watch.snapshot.most)")
        let errors = try await Self.sendUntilDone(phone, watch: watch)
        #expect(errors.isEmpty, "\(context): \(errors.prefix(2))")
        Self.expectWellBehaved(watch, depth: 8, context)
        try await Self.expectConverged(cloud, to: phone, context)
    }

    // MARK: - App edits while requests travel

    /// While each of the first five requests of a depth of five travels, the app edits: it
    /// adds a player under a game in flight, moves a synced player under a game in flight,
    /// renames and deletes games in flight and games not yet sent, and adds games. The new
    /// children never go beside or before their parents, and nothing is lost.
    @Test(arguments: [false, true])
    func appEditsWhileFiveTravel(reverse: Bool) async throws {
        let context = reverse ? "reverse" : "in order"
        let cloud = MockCloud()
        let database = Mutex<DatabaseQueue?>(nil)
        let watch = Watch(fill: 5, holdBound: .milliseconds(20), reverse: reverse) { number, send, saving, _, _ in
            guard send == 1, number <= 10, let database = database.withLock({ $0 }) else { return nil }
            let games = saving.filter { $0.type == "games" }.map { $0.id.name.replacingOccurrences(of: ":games", with: "") }
            guard let game = games.first, let last = games.last else { return nil }
            try await Self.appWrite(
                database,
                """
                INSERT INTO players (id, gameID, name) VALUES ('new-\(game)', '\(game)', 'N');
                UPDATE players SET gameID = '\(game)' WHERE id = 's\(number % 4)p0';
                UPDATE games SET title = 'edited in flight' WHERE id = '\(game)';
                DELETE FROM games WHERE id = '\(last)';
                DELETE FROM games WHERE id = 'g\(60 - number)';
                INSERT INTO games (id, title) VALUES ('late\(number)', 'late');
                INSERT INTO players (id, gameID, name) VALUES ('late\(number)p', 'late\(number)', 'L');
                """)
            return nil
        }
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 4, maximumBatchesInFlight: 5)
        database.withLock { $0 = phone.database }
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<4, players: 1, prefix: "s"))
        watch.beginSend(0)
        try await phone.engine.sendChanges()
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<60, players: 0))
        let errors = try await Self.sendUntilDone(phone, watch: watch, from: 1)
        #expect(errors.isEmpty, "\(context): \(errors.prefix(2))")
        #expect(watch.snapshot.most >= 2, "\(context): nothing travelled together")
        Self.expectWellBehaved(watch, depth: 5, context, resends: false)
        try await Self.expectConverged(cloud, to: phone, context)
        let rows = try await phone.rows()
        #expect(rows.contains { $0.hasPrefix("player new-") }, "\(context)")
        #expect(rows.contains { $0.hasPrefix("player late") && $0.hasSuffix("'L'") }, "\(context)")
    }

    // MARK: - A crash with batches in flight

    /// Every request travelling at a depth of four or eight (at least two together) lands in
    /// the cloud and its answer never comes back (the process "dies"); the app wrote meanwhile. A new engine over the same database
    /// finds their records still pending, sends them again without an error (equal versions),
    /// and the devices converge.
    @Test(arguments: [4, 8])
    func aCrashWithEveryBatchInFlightLosesNothing(depth: Int) async throws {
        struct Crash: Error {}
        let cloud = MockCloud()
        let database = Mutex<DatabaseQueue?>(nil)
        let watch = Watch(fill: depth, holdBound: .milliseconds(20), firstWave: 2) { number, _, saving, deleting, next in
            _ = try await next.modifyRecords(saving: saving, deleting: deleting)
            if number == 1, let database = database.withLock({ $0 }) {
                try await Self.appWrite(database, "UPDATE games SET score = 1000 WHERE id = 'g0'; DELETE FROM players WHERE id = 'g1p0'")
            }
            throw Crash()
        }
        let phone = try await SyncTestDevice(
            "phone", container: watch.container(cloud.container(user: "alice")), batchSize: 4, maximumBatchesInFlight: depth)
        database.withLock { $0 = phone.database }
        try await Self.appWrite(phone.database, Self.gamesSQL(0..<(depth * 2), players: 1))
        let total = try await phone.pending()
        await #expect(throws: (any Error).self) { try await phone.engine.sendChanges() }
        #expect(watch.snapshot.most >= 2, "depth \(depth): \(watch.snapshot.most)")
        #expect(!cloud.records(in: Self.zone).isEmpty, "depth \(depth): nothing landed")
        let restarted = try await SyncTestDevice("phone", cloud: cloud, schema: "", database: phone.database, maximumBatchesInFlight: depth)
        #expect(try await restarted.pending() >= total - 1, "depth \(depth): records in flight stopped being pending")
        let errors = try await Self.sendUntilDone(restarted)
        #expect(errors.isEmpty, "depth \(depth): \(errors.prefix(2))")
        let rows = try await restarted.rows()
        #expect(rows.contains("game g0 'Game 0' 1000"), "depth \(depth)")
        #expect(!rows.contains { $0.hasPrefix("player g1p0 ") }, "depth \(depth)")
        try await Self.expectConverged(cloud, to: restarted, "depth \(depth)")
    }
}
