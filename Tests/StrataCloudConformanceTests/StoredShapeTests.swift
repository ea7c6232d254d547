import Foundation
import Logging
import PostgresNIO
import StrataCloudClient
import StrataSync
import Testing

/// A record the store holds in a shape no client reads (written into the table by hand): the
/// service copies stored JSON into pages, so the client meets it, and reports it as a wrong
/// answer for good, never as a network failure to retry for ever. A page cut on the way is
/// still a network failure.
@Suite(.enabled(if: CloudKind.postgresURL != nil, "needs STRATA_TEST_POSTGRES"), .timeLimit(.minutes(2)))
struct StoredShapeTests {
    @Test(arguments: [#"{"title": 5}"#, #"{"title": {"text": {"_0": 5}}}"#, #"{"title": {"nope": {}}}"#])
    func aStoredRecordNoClientReadsIsAWrongAnswerNotANetworkFailure(fields: String) async throws {
        try await LiveService.with { live in
            let database = live.container(user: "alice").privateDatabase
            let zone = CloudZoneID(name: "games", owner: "alice")
            try await database.saveZones([zone])
            let game = CloudRecord(id: CloudRecordID(name: "g1:games", zone: zone), type: "games", fields: ["title": .text("Poker")])
            _ = try await database.modifyRecords(saving: [game], deleting: [])
            try await live.client.query(
                PostgresQuery(unsafeSQL: "UPDATE strata_cloud.records SET fields = '\(fields)'::jsonb WHERE owner = 'alice'"),
                logger: Logger(label: "strata.tests"))
            for _ in 0..<2 {
                await #expect {
                    _ = try await database.fetchZoneChanges(zone, since: nil, limit: 10)
                } throws: { error in
                    guard case CloudServiceClientError.unexpectedResponse(200, _) = error else { return false }
                    return true
                }
            }
            let arriving = try await database.fetchArrivingZoneChanges(zone, since: nil, limit: 10)
            await #expect(throws: CloudServiceClientError.self) { _ = try await arriving.changes() }
        }
    }
}
