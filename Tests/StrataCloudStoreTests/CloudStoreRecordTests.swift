import Foundation
import PostgresNIO
import StrataCloud
import StrataCloudStore
import Testing

/// A user's own zones and records in PostgreSQL: the behaviour MockCloud's record and feed
/// suites describe.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct CloudStoreRecordTests {
    @Test func migratingTwiceAppliesNothingTheSecondTime() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        #expect(try await fixture.store.migrate().isEmpty)
    }

    @Test func savedRecordsComeBackWithTagsAndAStaleTagIsRefused() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let game = CloudRecord(id: CloudRecordID(name: "g1:games", zone: zone), type: "games", fields: ["title": .text("Poker")])
        let saved = try #require(try await alice.modifyRecords(saving: [game], deleting: []).saveResults[game.id]?.get())
        #expect(saved.changeTag != nil)
        let fetched = try await alice.fetchRecords([game.id])[game.id]?.get()
        #expect(fetched == saved)

        var edit = saved
        edit.fields["title"] = .text("Poker night")
        _ = try await alice.modifyRecords(saving: [edit], deleting: [])
        var stale = saved
        stale.fields["title"] = .text("Stale")
        let refused = try await alice.modifyRecords(saving: [stale], deleting: [])
        guard case .failure(.serverRecordChanged(let server))? = refused.saveResults[game.id] else {
            Issue.record("expected serverRecordChanged, got \(String(describing: refused.saveResults[game.id]))")
            return
        }
        #expect(server.fields["title"] == .text("Poker night"))
        var new = game
        new.id = CloudRecordID(name: "g2:games", zone: zone)
        new.changeTag = "t1"
        #expect(
            try await alice.modifyRecords(saving: [new], deleting: []).saveResults[new.id].map { result in
                if case .failure(.unknownItem) = result { true } else { false }
            } == true)
    }

    /// A request naming a record twice keeps its last save, with that save's own fields,
    /// versions and size, whatever the order of the other saves. (Checked when the rows' JSON
    /// was written before the transaction and found again by each save's place: a wrong place
    /// stored an earlier save's columns.)
    @Test(arguments: [["a1", "b1", "a2", "c1", "b2"], ["a1", "a2", "a3"], ["c1", "b1", "a1", "b2", "a2", "c2"]])
    func eachSaveWritesItsOwnColumnsWhenARequestNamesARecordTwice(order: [String]) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        func save(_ label: String) -> CloudRecord {
            let name = String(label.prefix(1))
            let revision = Int(label.dropFirst()) ?? 0
            let version = HybridTimestamp(milliseconds: 1_700_000_000_000 + Int64(revision), counter: UInt32(revision), node: label)
            return CloudRecord(
                id: CloudRecordID(name: "\(name):games", zone: zone), type: "games",
                fields: [
                    "title": .text(label), "round": .integer(Int64(revision)), "notes": .text(String(repeating: "n", count: revision * 7)),
                ],
                fieldVersions: ["title": version, "round": version, "notes": version])
        }
        let saves = order.map(save)
        _ = try await alice.modifyRecords(saving: saves, deleting: [])
        var last: [CloudRecordID: CloudRecord] = [:]
        for record in saves { last[record.id] = record }
        let fetched = try await alice.fetchRecords(Array(last.keys))
        let changes = try await alice.fetchZoneChanges(zone, since: nil, limit: 100)
        for (id, expected) in last {
            let stored = try #require(try fetched[id]?.get(), "\(id.name)")
            #expect(stored.fields == expected.fields, "\(id.name)")
            #expect(stored.fieldVersions == expected.fieldVersions, "\(id.name)")
            let paged = try #require(changes.changed.first { $0.id == id }, "\(id.name)")
            #expect(paged.fields == expected.fields && paged.fieldVersions == expected.fieldVersions, "\(id.name)")
            var size: Int64?
            for try await stored in try await fixture.client.query(
                "SELECT size FROM strata_cloud.records WHERE owner = \(zone.owner) AND zone = \(zone.name) AND name = \(id.name)"
            ).decode(Int64.self) {
                size = stored
            }
            #expect(size == Int64(expected.encodedSize), "\(id.name)")
        }
    }

    @Test func aZoneIsAtomicAndReferencesAreChecked() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let game = CloudRecord(id: CloudRecordID(name: "g1:games", zone: zone), type: "games")
        let orphan = CloudRecord(
            id: CloudRecordID(name: "p1:players", zone: zone), type: "players", parent: CloudRecordID(name: "g9:games", zone: zone))
        let result = try await alice.modifyRecords(saving: [game, orphan], deleting: [])
        #expect(result.saveResults[orphan.id].map { if case .failure(.referenceViolation) = $0 { true } else { false } } == true)
        #expect(result.saveResults[game.id].map { if case .failure(.batchRequestFailed) = $0 { true } else { false } } == true)
        #expect(
            try await alice.fetchRecords([game.id])[game.id].map { if case .failure(.unknownItem) = $0 { true } else { false } } == true)

        let player = CloudRecord(id: CloudRecordID(name: "p1:players", zone: zone), type: "players", parent: game.id)
        let both = try await alice.modifyRecords(saving: [game, player], deleting: [])
        #expect(both.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } })
        let parentFirst = try await alice.modifyRecords(saving: [], deleting: [game.id])
        #expect(parentFirst.deleteResults[game.id].map { if case .failure(.referenceViolation) = $0 { true } else { false } } == true)
        let together = try await alice.modifyRecords(saving: [], deleting: [game.id, player.id])
        #expect(together.deleteResults.values.allSatisfy { if case .success = $0 { true } else { false } })
    }

    @Test func theZoneFeedPagesSavesAndTombstonesAndExpiresAfterAPurge() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let records = (1...5).map { CloudRecord(id: CloudRecordID(name: "g\($0):games", zone: zone), type: "games") }
        _ = try await alice.modifyRecords(saving: records, deleting: [])
        let first = try await alice.fetchZoneChanges(zone, since: nil, limit: 3)
        #expect(first.changed.map(\.id.name) == ["g1:games", "g2:games", "g3:games"] && first.moreComing)
        let second = try await alice.fetchZoneChanges(zone, since: first.token, limit: 3)
        #expect(second.changed.map(\.id.name) == ["g4:games", "g5:games"] && !second.moreComing)

        _ = try await alice.modifyRecords(saving: [], deleting: [records[0].id])
        let third = try await alice.fetchZoneChanges(zone, since: second.token, limit: 3)
        #expect(third.changed.isEmpty && third.deleted == [CloudTombstone(id: records[0].id, type: "games")])
        #expect(try await alice.fetchZoneChanges(zone, since: third.token, limit: 3).changed.isEmpty)

        try await fixture.store.purgeTombstones(in: zone)
        await #expect(throws: CloudError.changeTokenExpired) { _ = try await alice.fetchZoneChanges(zone, since: third.token, limit: 3) }
        #expect(try await alice.fetchZoneChanges(zone, since: nil, limit: 10).changed.count == 4)
    }

    @Test func theDatabaseFeedNamesChangedAndDeletedZones() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let games = fixture.zone("games", of: "alice")
        let notes = fixture.zone("notes", of: "alice")
        try await alice.saveZones([games, notes])
        let start = try await alice.fetchDatabaseChanges(since: nil)
        #expect(Set(start.changedZones) == [games, notes])
        _ = try await alice.modifyRecords(
            saving: [CloudRecord(id: CloudRecordID(name: "g1:games", zone: games), type: "games")], deleting: [])
        try await alice.deleteZones([notes])
        let next = try await alice.fetchDatabaseChanges(since: start.token)
        #expect(next.changedZones == [games] && next.deletedZones == [notes])
        #expect(try await alice.fetchDatabaseChanges(since: next.token).changedZones.isEmpty)
        await #expect(throws: CloudError.zoneNotFound(notes)) { _ = try await alice.fetchZoneChanges(notes, since: nil, limit: 10) }
    }

    @Test func assetsAreStoredWholeAndCheckedOnTheWayIn() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let data = Data("hello".utf8)
        let chunk = CloudAsset.Chunk(data: data, encoding: 0, size: 5, crc32: CloudAsset.checksum(ofChunk: 0, data: data))
        // The SHA-256 of "hello": the store checks it.
        let hello = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
        let asset = CloudAsset(hash: hello, size: 5, chunkSize: 5, chunks: [chunk])
        #expect(try await alice.missingAssets([hello]) == [hello])
        try await alice.uploadAssets([asset])
        #expect(try await alice.missingAssets([hello]).isEmpty)
        #expect(try await alice.fetchAsset(hello) == asset)
        var forged = asset
        forged.hash = String(repeating: "0", count: 64)
        await #expect(throws: CloudError.invalidAsset(forged.hash, reason: "the content's SHA-256 is \(hello)")) {
            try await alice.uploadAssets([forged])
        }
        var damaged = asset
        damaged.hash = "def"
        damaged.chunks[0].crc32 ^= 1
        await #expect(throws: CloudError.invalidAsset("def", reason: "chunk 0 fails its CRC-32")) {
            try await alice.uploadAssets([damaged])
        }
        await #expect(throws: CloudError.assetNotFound("def")) { _ = try await alice.fetchAsset("def") }
    }

    @Test func aRequestOverTheLimitsIsRefusedWhole() async throws {
        let fixture = try await StoreFixture(limits: CloudLimits(maximumItemsPerRequest: 2))
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let records = (1...3).map { CloudRecord(id: CloudRecordID(name: "g\($0):games", zone: zone), type: "games") }
        await #expect(throws: CloudError.limitExceeded) { _ = try await alice.modifyRecords(saving: records, deleting: []) }
    }
}
