import Foundation
import PostgresNIO
import StrataCloud
import StrataCloudStore
import Testing

/// A zone's page with its records written as JSON from the stored texts (what the service
/// sends) is the page read into values, written: the same records, tombstones, token and
/// estimate, at every page size, through the private and the shared database.
@Suite(.enabled(if: TestPostgres.isAvailable, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(5)))
struct CloudStoreEncodedPageTests {
    /// Records holding every kind of value, and the values JSON makes hard: escapes, control
    /// characters, non-BMP text, the integer limits, non-finite and negative-zero reals, empty
    /// and binary bytes, asset references, nulls, no fields at all, a parent.
    static func records(in zone: CloudZoneID) -> [CloudRecord] {
        let version = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 3, node: "device \"a\"")
        let values: [[String: CloudValue]] = [
            ["title": .text("quote \" backslash \\ slash / tab \t bell \u{7} escape \u{1B} emoji 🎲 é"), "count": .integer(.max)],
            ["low": .integer(.min), "zero": .real(-0.0), "tiny": .real(5e-324), "big": .real(1.7976931348623157e308)],
            ["nan": .real(.nan), "up": .real(.infinity), "down": .real(-.infinity), "tenth": .real(0.1)],
            ["empty": .bytes(Data()), "binary": .bytes(Data((0...255).map { UInt8($0) })), "nothing": .null],
            ["photo": .asset(CloudAssetReference(hash: String(repeating: "ab", count: 32), size: 1 << 40))],
            [:],
        ]
        var records = values.enumerated().map { index, fields in
            CloudRecord(
                id: CloudRecordID(name: "g\(index):games", zone: zone), type: "games", fields: fields,
                fieldVersions: fields.mapValues { _ in version })
        }
        records += (0..<5).map { index in
            CloudRecord(
                id: CloudRecordID(name: "p\(index):players", zone: zone), type: "players", fields: ["name": .text("player \(index)")],
                fieldVersions: ["name": version], parent: CloudRecordID(name: "g0:games", zone: zone))
        }
        return records
    }

    /// Each record as `CloudRecord`'s JSON: equal texts for equal records, NaN included.
    static func texts(_ records: [CloudRecord]) -> [String] {
        records.map { record in
            var writer = JSONWriter()
            record.write(to: &writer)
            return writer.text
        }
    }

    static func decoded(_ page: EncodedZoneChanges) throws -> [CloudRecord] {
        var reader = JSONReader(Data(Array("[".utf8) + page.changed + Array("]".utf8)))
        let records = try reader.array { reader throws(JSONReaderError) in try CloudRecord(reading: &reader) }
        try reader.end()
        return records
    }

    /// Walks the zone page by page both ways, comparing every page; returns how many pages.
    static func comparePages(of zone: CloudZoneID, in database: CloudStoreDatabase, limit: Int) async throws -> Int {
        var token: CloudChangeToken?
        var pages = 0
        while true {
            let page = try await database.fetchZoneChanges(zone, since: token, limit: limit)
            let encoded = try await database.fetchEncodedZoneChanges(zone, since: token, limit: limit, plannedPages: 0)
            let records = try decoded(encoded)
            #expect(encoded.changedCount == records.count)
            #expect(texts(records) == texts(page.changed))
            #expect(encoded.deleted == page.deleted)
            #expect(encoded.token == page.token)
            #expect(encoded.moreComing == page.moreComing)
            #expect(encoded.remainingEstimate == page.remainingEstimate)
            pages += 1
            guard page.moreComing, pages < 100 else { return pages }
            token = page.token
        }
    }

    @Test(arguments: [1, 2, 3, 10, 11, 1000])
    func encodedPagesAreTheDecodedPagesWritten(limit: Int) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let records = Self.records(in: zone)
        let saved = try await alice.modifyRecords(saving: records, deleting: [])
        #expect(saved.saveResults.values.allSatisfy { if case .success = $0 { true } else { false } })
        // Tombstones among the saves, and a record saved again after them.
        _ = try await alice.modifyRecords(saving: [], deleting: [records[7].id, records[8].id])
        var again = try #require(try saved.saveResults[records[1].id]?.get())
        again.fields["count"] = .integer(2)
        _ = try await alice.modifyRecords(saving: [again], deleting: [])
        let pages = try await Self.comparePages(of: zone, in: alice, limit: limit)
        #expect(pages == (11 + limit - 1) / limit)
    }

    @Test func sharedPagesAreTheDecodedPagesWritten() async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        let records = Self.records(in: zone)
        _ = try await alice.modifyRecords(saving: records, deleting: [])
        var share = CloudShare(rootRecordID: records[0].id)
        share.participants.append(CloudShare.Participant(user: fixture.user("bob"), permission: .readOnly))
        share = try await alice.saveShare(share)
        _ = try await fixture.store.container(for: fixture.user("bob")).acceptShare(url: share.url)
        _ = try await alice.modifyRecords(saving: [], deleting: [records[6].id])
        let bob = fixture.store.sharedDatabase(of: fixture.user("bob"))
        for limit in [1, 4, 1000] {
            _ = try await Self.comparePages(of: zone, in: bob, limit: limit)
        }
        let page = try await bob.fetchEncodedZoneChanges(zone, since: nil, limit: 1000, plannedPages: 0)
        // The shared root and its players; not the other games.
        #expect(Set(try Self.decoded(page).map(\.id.name)) == ["g0:games", "p1:players", "p2:players", "p3:players", "p4:players"])
    }

    /// Fields stored by hand as JSON that is not an object are refused with the error reading
    /// them gives, never copied into a response.
    @Test(arguments: ["[1]", "1", "\"text\"", "null"])
    func storedJSONThatIsNotAnObjectIsRefused(json: String) async throws {
        let fixture = try await StoreFixture()
        defer { fixture.stop() }
        let alice = fixture.database("alice")
        let zone = fixture.zone("games", of: "alice")
        try await alice.saveZones([zone])
        _ = try await alice.modifyRecords(saving: Array(Self.records(in: zone).prefix(2)), deleting: [])
        try await fixture.client.query(
            PostgresQuery(
                unsafeSQL: "UPDATE strata_cloud.records SET fields = '\(json)'::jsonb WHERE owner = '\(zone.owner)' AND name = 'g1:games'"),
            logger: fixture.logger)
        await #expect(throws: (any Error).self) { try await alice.fetchZoneChanges(zone, since: nil, limit: 10) }
        await #expect(throws: (any Error).self) { try await alice.fetchEncodedZoneChanges(zone, since: nil, limit: 10, plannedPages: 0) }
    }
}
