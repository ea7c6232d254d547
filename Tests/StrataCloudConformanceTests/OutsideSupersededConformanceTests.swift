import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// The next `lose(_:)` modify requests of synced records reach the cloud, which applies them,
/// and then throw `networkFailure`: an answer lost after the cloud saved, on any cloud (the mock,
/// the PostgreSQL store, the HTTP service).
final class OutsideLostAnswers: Sendable {
    private let remaining = Atomic<Int>(0)

    /// How many answers are still to be lost.
    func lose(_ count: Int) { remaining.store(count, ordering: .relaxed) }

    /// Whether this request's answer is to be lost (and one fewer after it).
    func takeLoss() -> Bool {
        while true {
            let current = remaining.load(ordering: .relaxed)
            guard current > 0 else { return false }
            if remaining.compareExchange(expected: current, desired: current - 1, ordering: .relaxed).exchanged { return true }
        }
    }

    /// `base`, losing the answers this counts.
    func container(over base: any CloudContainer) -> InterceptingContainer {
        InterceptingContainer(base: base) { saving, deleting, next in
            let result = try await next.modifyRecords(saving: saving, deleting: deleting)
            if self.takeLoss() { throw CloudError.networkFailure }
            return result
        }
    }
}

/// An outside tester's cases of `supersededByDelete` on every cloud: whole engines losing an
/// answer over the PostgreSQL store and the HTTP service, and field versions at the ends of
/// their text form (Cloud.md: `-?[0-9]{1,18}\.[0-9]{1,9}@node`, at most 256 characters).
@Suite(.timeLimit(.minutes(4))) struct OutsideSupersededConformanceTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    var database: any CloudDatabase { cloud.container(user: "alice").privateDatabase }

    static func version(_ milliseconds: Int64, counter: UInt32 = 0, node: String = "a1") -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
    }

    func id(_ name: String) -> CloudRecordID { CloudRecordID(name: name, zone: zone) }

    func record(_ name: String, versions: [String: HybridTimestamp]) -> CloudRecord {
        CloudRecord(
            id: id(name), type: "games", fields: versions.mapValues { _ in .text("t") }, fieldVersions: versions, parent: nil,
            changeTag: nil)
    }

    func saveOutcome(_ record: CloudRecord) async throws -> CloudError? {
        let result = try await database.modifyRecords(saving: [record], deleting: [])
        if case .failure(let error)? = result.saveResults[record.id] { return error }
        return nil
    }

    func saveThenDelete(_ record: CloudRecord) async throws {
        #expect(try await saveOutcome(record) == nil)
        let result = try await database.modifyRecords(saving: [], deleting: [record.id])
        if case .failure(let error)? = result.deleteResults[record.id] { Issue.record("delete failed: \(error)") }
    }

    /// Versions compared as numbers, not as text: a counter of 10 is newer than one of 2, a
    /// millisecond count of 10 digits newer than one of 9, -5 newer than -10, and the largest
    /// values the text form allows survive storage exactly.
    @Test(arguments: CloudKind.available) func versionsCompareAsNumbersAfterStorage(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let cases: [(name: String, deleted: HybridTimestamp, older: HybridTimestamp, newer: HybridTimestamp)] = [
                ("counter", Self.version(100, counter: 10), Self.version(100, counter: 2), Self.version(100, counter: 11)),
                ("digits", Self.version(1_000_000_000), Self.version(999_999_999), Self.version(1_000_000_001)),
                ("negative", Self.version(-5), Self.version(-10), Self.version(-4)),
                (
                    "largest", Self.version(999_999_999_999_999_998, counter: 999_999_999),
                    Self.version(999_999_999_999_999_998, counter: 999_999_998),
                    Self.version(999_999_999_999_999_999, counter: 0)
                ),
                (
                    "node", Self.version(7, node: String(repeating: "n", count: 200) + "b"), Self.version(7, node: "n"),
                    Self.version(7, node: "o")
                ),
            ]
            for item in cases {
                try await saveThenDelete(record(item.name, versions: ["title": item.deleted]))
                #expect(
                    try await saveOutcome(record(item.name, versions: ["title": item.deleted])) == .supersededByDelete(id(item.name)),
                    "\(item.name) equal")
                #expect(
                    try await saveOutcome(record(item.name, versions: ["title": item.older])) == .supersededByDelete(id(item.name)),
                    "\(item.name) older")
                #expect(try await saveOutcome(record(item.name, versions: ["title": item.newer])) == nil, "\(item.name) newer")
            }
            #expect(try await cloud.records(in: zone).map(\.id.name).sorted() == cases.map(\.name).sorted())
        }
    }

    /// A record of many fields: one field newer is enough to be saved; none newer is refused.
    @Test(arguments: CloudKind.available) func oneNewerFieldAmongManyIsEnough(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            var versions: [String: HybridTimestamp] = [:]
            for index in 0..<150 { versions["field\(index)"] = Self.version(Int64(1_000 + index)) }
            try await saveThenDelete(record("r", versions: versions))
            var older = versions
            for index in 0..<150 where index % 2 == 0 { older["field\(index)"] = Self.version(Int64(index)) }
            #expect(try await saveOutcome(record("r", versions: older)) == .supersededByDelete(id("r")))
            // A subset of the fields, all as deleted: refused too.
            let subset = versions.filter { $0.key.hasSuffix("7") }
            #expect(try await saveOutcome(record("r", versions: subset)) == .supersededByDelete(id("r")))
            var newer = versions
            newer["field149"] = Self.version(1_149, counter: 1)
            #expect(try await saveOutcome(record("r", versions: newer)) == nil)
        }
    }

    /// A tombstone whose delete went twice (its answer lost): the second delete of a name
    /// already gone must not forget, or empty, the versions the first one kept.
    @Test(arguments: CloudKind.available) func aDeleteSentAgainKeepsTheVersionsOfTheFirst(_ kind: CloudKind) async throws {
        try await kind.run {
            try await database.saveZones([zone])
            let versions = ["title": Self.version(10), "score": Self.version(12)]
            try await saveThenDelete(record("r", versions: versions))
            let again = try await database.modifyRecords(saving: [], deleting: [id("r")])
            if case .failure(let error)? = again.deleteResults[id("r")] { Issue.record("the second delete failed: \(error)") }
            #expect(try await saveOutcome(record("r", versions: versions)) == .supersededByDelete(id("r")))
        }
    }

    /// Whole engines: the phone's answer lost on the store and through the service, the game
    /// deleted on the tablet (with its player, by cascade), the phone's retry must not revive
    /// them; a game the tablet did not delete stays.
    @Test(arguments: CloudKind.available, [SyncEncryption.disabled, .endToEnd])
    func anEngineRetryAfterALostAnswerKeepsTheDelete(_ kind: CloudKind, encryption: SyncEncryption) async throws {
        try await kind.run {
            let time = ManualWallClock()
            let losing = OutsideLostAnswers()
            let phone = try await SyncTestDevice(
                "phone", container: losing.container(over: cloud.container(user: "alice")), time: time, encryption: encryption)
            let tablet = try await SyncTestDevice(
                "tablet", container: cloud.container(user: "alice"), time: time, encryption: encryption)
            try await phone.execute("INSERT INTO games (id, title) VALUES ('g0', 'Seed')")
            try await phone.engine.sendChanges()
            try await tablet.engine.fetchChanges()

            try await phone.execute(
                """
                INSERT INTO games (id, title, score) VALUES ('g1', 'Chess', 1), ('g2', 'Go', 2);
                INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann');
                """)
            losing.lose(1)
            await #expect(throws: CloudError.networkFailure) { try await phone.engine.sendChanges() }
            try await tablet.engine.fetchChanges()
            #expect(try await tablet.strings("SELECT id FROM players") == ["p1"])
            try await tablet.execute("DELETE FROM games WHERE id = 'g1'")
            try await tablet.engine.sendChanges()

            try await phone.engine.sendChanges()
            for device in [phone, tablet, phone, tablet] { try await device.engine.syncChanges() }
            let expected = ["game g0 'Seed' NULL", "game g2 'Go' 2"]
            #expect(try await phone.rows() == expected)
            #expect(try await tablet.rows() == expected)
            #expect(try await phone.pending() == 0)
            #expect(try await tablet.pending() == 0)
            let defaultZone = CloudZoneID(name: "strata.default", owner: "alice")
            #expect(try await cloud.records(in: defaultZone).map(\.id.name).sorted() == ["g0:games", "g2:games"])
        }
    }
}
