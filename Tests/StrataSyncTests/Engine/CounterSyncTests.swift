import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// A counter column (`games.score`) through the engine: concurrent changes on two and three
/// devices add up, whatever the order of sends and fetches, a page applied twice, a response
/// lost, a row inserted and changed elsewhere before its insert is acknowledged, a delete, an
/// older app version, and values at the ends of `Int64`.
@Suite(.timeLimit(.minutes(5))) struct CounterSyncTests {
    static let policies: [MergePolicy] = [.counter(table: "games", column: "score")]

    static func device(_ id: String, cloud: MockCloud, time: ManualWallClock, counters: Bool = true) async throws -> SyncTestDevice {
        try await SyncTestDevice(id, cloud: cloud, time: time, mergePolicies: counters ? policies : [])
    }

    /// Devices that all have game g1 with `score`, synced.
    static func devices(
        _ ids: [String], cloud: MockCloud, score: Int64 = 10, time: ManualWallClock = ManualWallClock()
    ) async throws -> [SyncTestDevice] {
        var devices: [SyncTestDevice] = []
        for id in ids { devices.append(try await device(id, cloud: cloud, time: time)) }
        try await devices[0].execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', \(score))")
        for device in devices { try await device.engine.syncChanges() }
        return devices
    }

    static func score(_ device: SyncTestDevice, _ game: String = "g1") async throws -> String? {
        try await device.strings("SELECT quote(score) FROM games WHERE id = '\(game)'").first
    }

    /// Syncs every device until none has anything left (bounded).
    static func settle(_ devices: [SyncTestDevice]) async throws {
        for _ in 0..<3 {
            for device in devices { try await device.engine.syncChanges() }
        }
    }

    static func expectConverged(_ devices: [SyncTestDevice], score: String, _ comment: Comment? = nil) async throws {
        for device in devices {
            let actual = try await Self.score(device)
            #expect(actual == score, "\(device.id) has \(actual ?? "no row"): \(comment ?? "")")
            #expect(try await device.pending() == 0, "\(device.id) has changes pending: \(comment ?? "")")
        }
    }

    @Test func twoConcurrentIncrementsBothCountInEveryOrderOfSendsAndFetches() async throws {
        enum Step: CaseIterable { case aSends, bSends, aFetches, bFetches }
        func permutations(_ steps: [Step]) -> [[Step]] {
            guard steps.count > 1 else { return [steps] }
            return steps.indices.flatMap { index in
                var rest = steps
                let first = rest.remove(at: index)
                return permutations(rest).map { [first] + $0 }
            }
        }
        for order in permutations(Step.allCases) {
            let cloud = MockCloud()
            let devices = try await Self.devices(["a", "b"], cloud: cloud)
            let (a, b) = (devices[0], devices[1])
            try await a.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
            try await b.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
            for step in order {
                switch step {
                case .aSends: try await a.engine.sendChanges()
                case .bSends: try await b.engine.sendChanges()
                case .aFetches: try await a.engine.fetchChanges()
                case .bFetches: try await b.engine.fetchChanges()
                }
            }
            try await Self.settle(devices)
            try await Self.expectConverged(devices, score: "12", "order \(order)")
        }
    }

    @Test func incrementsAndDecrementsOnThreeDevicesAddUp() async throws {
        let cloud = MockCloud()
        let devices = try await Self.devices(["a", "b", "c"], cloud: cloud)
        try await devices[0].execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await devices[1].execute("UPDATE games SET score = score + 5 WHERE id = 'g1'")
        try await devices[2].execute("UPDATE games SET score = score - 3 WHERE id = 'g1'")
        try await devices[2].execute("UPDATE games SET score = score - 1 WHERE id = 'g1'")
        // c and b sync before a has sent; a then both again.
        try await devices[2].engine.syncChanges()
        try await devices[1].engine.syncChanges()
        try await devices[1].execute("UPDATE games SET score = score + 2 WHERE id = 'g1'")
        try await Self.settle(devices)
        try await Self.expectConverged(devices, score: "14")  // 10 + 1 + 5 - 3 - 1 + 2
    }

    @Test func aPageAppliedTwiceAndALostResponseCountOnce() async throws {
        let cloud = MockCloud()
        let devices = try await Self.devices(["a", "b"], cloud: cloud)
        let (a, b) = (devices[0], devices[1])
        try await a.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        // The cloud saves a's record, but a never hears of it: a sends it again, without the
        // new change tag, and merges the copy the cloud answers with.
        cloud.loseNextResponses(1, operations: [.modifyRecords])
        await #expect(throws: CloudError.self) { try await a.engine.sendChanges() }
        try await b.execute("UPDATE games SET score = score + 2 WHERE id = 'g1'")
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await Self.expectConverged(devices, score: "13")
        // A crash between a page and its token: the page comes again, and changes nothing.
        for device in devices {
            try await device.database.write { db in try db.execute(sql: "DELETE FROM strata_sync.state WHERE key LIKE 'token.%'") }
            try await device.engine.fetchChanges()
            try await device.engine.fetchChanges()
        }
        try await Self.expectConverged(devices, score: "13")
    }

    @Test func aRowInsertedHereAndIncrementedThereBeforeTheInsertIsAcknowledged() async throws {
        let cloud = MockCloud()
        let devices = try await Self.devices(["a", "b"], cloud: cloud)
        let (a, b) = (devices[0], devices[1])
        // a inserts g2 with 5 and adds 1 in the same transaction; the cloud keeps the insert,
        // but a loses the answer.
        try await a.execute(
            "INSERT INTO games (id, title, score) VALUES ('g2', 'Chess', 5); UPDATE games SET score = score + 1 WHERE id = 'g2'")
        cloud.loseNextResponses(1, operations: [.modifyRecords])
        await #expect(throws: CloudError.self) { try await a.engine.sendChanges() }
        try await b.engine.syncChanges()
        #expect(try await Self.score(b, "g2") == "6")
        try await b.execute("UPDATE games SET score = score + 10 WHERE id = 'g2'")
        try await a.execute("UPDATE games SET score = score + 100 WHERE id = 'g2'")
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        try await Self.settle(devices)
        for device in devices {
            #expect(try await Self.score(device, "g2") == "116")
            #expect(try await device.pending() == 0)
        }
    }

    @Test func settingTheColumnIsAChangeByTheDifference() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let a = try await Self.device("a", cloud: cloud, time: time)
        let b = try await Self.device("b", cloud: cloud, time: time)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 40)")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        // Setting the column is a change by the difference: a resets to 0 while b adds 1.
        try await a.execute("UPDATE games SET score = 0 WHERE id = 'g1'")
        try await b.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await Self.settle([a, b])
        try await Self.expectConverged([a, b], score: "1")
        // NULL counts as 0: from 1 to NULL is -1, and reads NULL everywhere.
        try await b.execute("UPDATE games SET score = NULL WHERE id = 'g1'")
        try await Self.settle([a, b])
        try await Self.expectConverged([a, b], score: "NULL")
        try await a.execute("UPDATE games SET score = coalesce(score, 0) + 2 WHERE id = 'g1'")
        try await b.execute("UPDATE games SET score = coalesce(score, 0) + 3 WHERE id = 'g1'")
        try await Self.settle([a, b])
        try await Self.expectConverged([a, b], score: "5")
    }

    @Test func aDeletedRowForgetsItsCounterAndAnEditBeatsARemoteDelete() async throws {
        let cloud = MockCloud()
        let devices = try await Self.devices(["a", "b"], cloud: cloud)
        let (a, b) = (devices[0], devices[1])
        try await a.execute("DELETE FROM games WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await b.engine.syncChanges()  // b's edit beats the delete: g1 goes again, as new
        try await a.engine.syncChanges()
        try await Self.expectConverged(devices, score: "11")
        // A delete with nothing against it: the row and its counter state go everywhere, and
        // a row inserted again under the same key starts from its own value.
        try await b.execute("DELETE FROM games WHERE id = 'g1'")
        try await Self.settle(devices)
        for device in devices {
            #expect(try await device.strings("SELECT CAST(count(*) AS TEXT) FROM strata_sync.counters") == ["0"])
        }
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Again', 3)")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await b.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await Self.settle(devices)
        try await Self.expectConverged(devices, score: "4")
    }

    @Test func anOlderAppVersionWithoutTheCounterFallsBackToThePlainRule() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        let new = try await Self.device("new", cloud: cloud, time: time)
        let old = try await Self.device("old", cloud: cloud, time: time, counters: false)
        try await old.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 10)")
        try await old.engine.syncChanges()
        try await new.engine.syncChanges()
        // One after the other, each sees the other's: nothing is lost.
        try await new.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await new.engine.syncChanges()
        try await old.engine.syncChanges()
        try await old.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await old.engine.syncChanges()
        try await new.engine.syncChanges()
        try await new.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await Self.settle([new, old])
        try await Self.expectConverged([new, old], score: "13")
        // The older app keeps the counter's field it does not know, and sends it back.
        let record = try #require(try await new.cloudRecords(cloud).first)
        #expect(record.fields["strata.counter.score"] != nil)
        // Concurrent changes with the older app: last writer wins, and both devices agree.
        try await new.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await old.execute("UPDATE games SET score = score + 5 WHERE id = 'g1'")
        try await Self.settle([new, old])
        let final = try await Self.score(new)
        #expect(try await Self.score(old) == final)
        #expect(["14", "18"].contains(final))
        #expect(try await new.pending() == 0)
        #expect(try await old.pending() == 0)
    }

    @Test func theCountersStateTravelsSealed() async throws {
        let cloud = MockCloud()
        let devices = try await Self.devices(["a", "b"], cloud: cloud)
        try await devices[0].execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await devices[0].engine.syncChanges()
        let stored = try #require(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).first)
        #expect(Array(stored.fields.keys) == ["strata.sealed"])
        #expect(stored.fieldVersions["strata.counter.score"] == nil)
        let opened = try #require(try await devices[0].cloudRecords(cloud).first)
        #expect(opened.fields["score"] == .integer(11))
        guard case .text(let state)? = opened.fields["strata.counter.score"] else {
            Issue.record("no counter state in \(opened.fields)")
            return
        }
        #expect(state.contains("\"a\""))
    }

    @Test func aSumBeyondInt64IsATypedErrorNeverATrap() async throws {
        let cloud = MockCloud()
        let devices = try await Self.devices(["a", "b"], cloud: cloud, score: .max - 1)
        let (a, b) = (devices[0], devices[1])
        try await a.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        // b cannot add a's +1 to its own: the record is quarantined, naming the counter.
        _ = try? await b.engine.fetchChanges()
        let errors = try await b.strings("SELECT error FROM strata_sync.quarantined_records WHERE recordName = 'g1:games'")
        #expect(errors == [CounterMergeError.overflow(table: "games", column: "score", primaryKey: "g1").description])
        #expect(try await Self.score(b) == String(Int64.max))

        // Locally: another device took 10 away, and this one sets the column to Int64.max; its
        // own contribution would not fit, and the send says so, keeping the change.
        let cloud2 = MockCloud()
        let pair = try await Self.devices(["c", "d"], cloud: cloud2, score: 0)
        try await pair[1].execute("UPDATE games SET score = score - 10 WHERE id = 'g1'")
        try await pair[1].engine.syncChanges()
        try await pair[0].engine.syncChanges()
        try await pair[0].execute("UPDATE games SET score = \(Int64.max) WHERE id = 'g1'")
        await #expect(throws: CounterMergeError.overflow(table: "games", column: "score", primaryKey: "g1")) {
            try await pair[0].engine.sendChanges()
        }
        try await pair[0].execute("UPDATE games SET score = 7 WHERE id = 'g1'")
        try await Self.settle(pair)
        try await Self.expectConverged(pair, score: "7")
    }

    @Test func aValueThatIsNotAnIntegerStopsTheSendNamingTheRow() async throws {
        let cloud = MockCloud()
        let devices = try await Self.devices(["a", "b"], cloud: cloud)
        try await devices[0].execute("UPDATE games SET score = 'lots' WHERE id = 'g1'")
        await #expect(throws: CounterMergeError.notAnInteger(table: "games", column: "score", primaryKey: "g1", value: "the text \"lots\""))
        {
            try await devices[0].engine.sendChanges()
        }
        try await devices[0].execute("UPDATE games SET score = 12 WHERE id = 'g1'")
        try await Self.settle(devices)
        try await Self.expectConverged(devices, score: "12")
    }

    @Test func policiesAreCheckedWhenTheEngineIsCreated() async throws {
        let schema = SyncTestDevice.schemaSQL + "CREATE TABLE ratings (id TEXT PRIMARY KEY NOT NULL, stars REAL, votes INT);"
        let tables = SyncTestDevice.tableNames + ["ratings"]
        let cases: [(MergePolicy, SyncSchemaError)] = [
            (.counter(table: "nope", column: "score"), .mergePolicyTableNotSynced(table: "nope", column: "score")),
            (.counter(table: "games", column: "nope"), .mergePolicyColumnNotFound(table: "games", column: "nope")),
            (.counter(table: "games", column: "titleLength"), .mergePolicyColumnNotFound(table: "games", column: "titleLength")),
            (.counter(table: "games", column: "title"), .counterColumnNotInteger(table: "games", column: "title", declaredType: "TEXT")),
            (
                .counter(table: "ratings", column: "stars"),
                .counterColumnNotInteger(table: "ratings", column: "stars", declaredType: "REAL")
            ),
            (.counter(table: "games", column: "id"), .mergePolicyOnKeyColumn(table: "games", column: "id")),
            (.custom(table: "players", column: "gameID") { $1.value }, .mergePolicyOnKeyColumn(table: "players", column: "gameID")),
        ]
        for (policy, expected) in cases {
            await #expect(throws: expected) {
                _ = try await SyncTestDevice("a", cloud: MockCloud(), schema: schema, tables: tables, mergePolicies: [policy])
            }
        }
        await #expect(throws: SyncSchemaError.duplicateMergePolicy(table: "games", column: "score")) {
            _ = try await SyncTestDevice(
                "a", cloud: MockCloud(),
                mergePolicies: [.counter(table: "games", column: "score"), .custom(table: "games", column: "score") { $1.value }])
        }
        // An INT column (integer affinity) is a valid counter.
        _ = try await SyncTestDevice(
            "a", cloud: MockCloud(), schema: schema, tables: tables, mergePolicies: [.counter(table: "ratings", column: "votes")])
    }

    @Test func anAppUpdateThatMakesASyncedColumnACounter() async throws {
        // Both devices synced the column by the default rule; the update declares it a counter.
        let cloud = MockCloud()
        let time = ManualWallClock()
        let before = [
            try await Self.device("a", cloud: cloud, time: time, counters: false),
            try await Self.device("b", cloud: cloud, time: time, counters: false),
        ]
        try await before[0].execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 10)")
        try await before[0].execute("UPDATE games SET score = score + 5 WHERE id = 'g1'")
        for device in before { try await device.engine.syncChanges() }
        var after: [SyncTestDevice] = []
        for device in before {
            after.append(
                try await SyncTestDevice(
                    device.id, cloud: cloud, time: time, schema: "", database: device.database, mergePolicies: Self.policies))
        }
        try await after[0].execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await after[1].execute("UPDATE games SET score = score + 2 WHERE id = 'g1'")
        try await Self.settle(after)
        try await Self.expectConverged(after, score: "18")
        // A device that joins later takes the state, and its changes count too.
        let late = try await Self.device("late", cloud: cloud, time: time)
        try await late.engine.syncChanges()
        try await late.execute("UPDATE games SET score = score - 4 WHERE id = 'g1'")
        try await after[0].execute("UPDATE games SET score = score + 1 WHERE id = 'g1'")
        try await Self.settle(after + [late])
        try await Self.expectConverged(after + [late], score: "15")
    }

    @Test func aLargeTransactionOfCountersInSmallBatches() async throws {
        let cloud = MockCloud()
        let time = ManualWallClock()
        var devices: [SyncTestDevice] = []
        for id in ["a", "b"] {
            devices.append(
                try await SyncTestDevice(id, cloud: cloud, time: time, batchSize: 7, fetchPageSize: 5, mergePolicies: Self.policies))
        }
        let inserts = (0..<300).map { "INSERT INTO games (id, title, score) VALUES ('g\($0)', 't', \($0))" }
        try await devices[0].execute(inserts.joined(separator: ";"))
        for device in devices { try await device.engine.syncChanges() }
        // Each device adds to every game in one transaction, some games twice.
        try await devices[0].execute("UPDATE games SET score = score + 1; UPDATE games SET score = score + 1 WHERE id LIKE 'g1%'")
        try await devices[1].execute("UPDATE games SET score = score - 3")
        try await Self.settle(devices)
        for device in devices {
            let wrong = try await device.strings(
                "SELECT id || ' ' || score FROM games WHERE score <> CAST(substr(id, 2) AS INTEGER) + 1 - 3 + (id LIKE 'g1%')")
            #expect(wrong.isEmpty, "\(device.id): \(wrong.prefix(5))")
            #expect(try await device.strings("SELECT CAST(count(*) AS TEXT) FROM games") == ["300"])
            #expect(try await device.pending() == 0)
        }
    }
}
