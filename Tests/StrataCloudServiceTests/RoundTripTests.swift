import Foundation
import StrataCloudClient
import StrataCloudService
import StrataCloudWire
import StrataSync
import Testing

/// Every operation gives the same results and the same errors through the service as when
/// called on MockCloud directly.
@Suite(.timeLimit(.minutes(5))) struct RoundTripTests {
    static let limits = CloudLimits(maximumItemsPerRequest: 4)

    @Test func theServiceAnswersAsMockCloudDoes() async throws {
        let direct = MockCloud(limits: Self.limits)
        let expected = await CloudScript.run(
            alice: direct.container(user: "alice"), bob: direct.container(user: "bob"), purge: direct.purgeTombstones(in:))

        let served = MockCloud(limits: Self.limits)
        let lines = try await ServiceHarness.with(cloud: served) { harness in
            let transcript = await CloudScript.run(
                alice: try await harness.container(user: "alice"), bob: try await harness.container(user: "bob"),
                purge: served.purgeTombstones(in:))
            return transcript.lines
        }
        #expect(lines.count == expected.lines.count)
        #expect(!lines.contains { $0.contains("unexpected") }, "\(lines.filter { $0.contains("unexpected") })")
        // The awkward values came back as sent: the saved record is compared whole below.
        #expect(lines.contains { $0.hasPrefix("fetch saved: ok") && $0.contains("+Infinity") && $0.contains("9223372036854775807") })
        for (line, expectedLine) in zip(lines, expected.lines) {
            #expect(line == expectedLine)
        }
        // The script does reach every failure it is meant to.
        for code in [
            "serverRecordChanged", "zoneNotFound", "unknownItem", "referenceViolation", "batchRequestFailed",
            "changeTokenExpired", "assetNotFound", "invalidAsset", "permissionFailure", "limitExceeded",
        ] {
            #expect(expected.contains(code: code), "the script never hits \(code)")
        }
    }

    @Test func aStaleSaveCarriesTheServerRecord() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            try await database.saveZones([CloudScript.zone])
            let first = try await database.modifyRecords(saving: [CloudScript.record("g1", fields: ["title": .text("A")])], deleting: [])
            let stored = try #require(try first.saveResults[CloudScript.record("g1").id]?.get())
            let second = try await database.modifyRecords(saving: [CloudScript.record("g1", fields: ["title": .text("B")])], deleting: [])
            #expect(throws: CloudError.serverRecordChanged(stored)) { try second.saveResults[stored.id]?.get() }
            #expect(cloud.records(in: CloudScript.zone) == [stored])
        }
    }

    @Test(arguments: [
        CloudError.quotaExceeded, .networkFailure, .notAuthenticated, .changeTokenExpired, .limitExceeded,
        .serviceUnavailable(retryAfter: nil), .serviceUnavailable(retryAfter: .milliseconds(1500)),
        .requestRateLimited(retryAfter: .seconds(7)), .requestRateLimited(retryAfter: nil),
        .permissionFailure(nil), .zoneNotFound(CloudScript.zone),
    ])
    func wholeRequestErrorsArriveUnchanged(_ error: CloudError) async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            cloud.failNextRequests(1, with: error)
            await #expect(throws: error) { _ = try await database.fetchDatabaseChanges(since: nil) }
            #expect(cloud.requestCount(.fetchDatabaseChanges) == 1)
        }
    }

    @Test func retryAfterTravelsAsAHeaderToo() async throws {
        let cloud = MockCloud()
        try await ServiceHarness.with(cloud: cloud) { harness in
            cloud.failNextRequests(1, with: .requestRateLimited(retryAfter: .milliseconds(2500)))
            let token = try await harness.token(user: "alice")
            let response = try await harness.send(
                .POST, CloudRoute.database(.private, .fetchDatabaseChanges), authorization: "Bearer \(token)", body: Data("{}".utf8))
            #expect(response.status == 429)
            #expect(response.headers["retry-after"] == "3")
        }
    }

    @Test func namesThatLookLikeSQLAreData() async throws {
        let cloud = MockCloud()
        let evil = "x'; DROP TABLE records; --"
        try await ServiceHarness.with(cloud: cloud) { harness in
            let database = try await harness.container(user: "alice").privateDatabase
            let zone = CloudZoneID(name: evil, owner: "alice")
            try await database.saveZones([zone])
            let record = CloudRecord(
                id: CloudRecordID(name: evil, zone: zone), type: evil,
                fields: [evil: .text(evil), "\"; DELETE FROM zones; --": .integer(1)])
            let saved = try #require(try await database.modifyRecords(saving: [record], deleting: []).saveResults[record.id]?.get())
            #expect(saved.id == record.id && saved.type == evil && saved.fields == record.fields)
            let fetched = try await database.fetchRecords([record.id])[record.id]?.get()
            #expect(fetched == saved)
            let changes = try await database.fetchZoneChanges(zone, since: nil, limit: 10)
            #expect(changes.changed == [saved])
            #expect(cloud.records(in: zone) == [saved])
        }
    }
}
