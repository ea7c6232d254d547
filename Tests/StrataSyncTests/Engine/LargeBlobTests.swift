import Foundation
import StrataSQLite
@testable import StrataSync
import Testing

/// A plain BLOB value syncs inside its record when small, and as an asset above the threshold:
/// the record stays small, the content goes up once and arrives as the column's bytes.
@Suite struct LargeBlobTests {
    static let schema = "CREATE TABLE photos (id TEXT PRIMARY KEY NOT NULL, caption TEXT, bytes BLOB)"

    func device(_ id: String, cloud: MockCloud) async throws -> (DatabaseQueue, SyncEngine) {
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: Self.schema) }
        let engine = try SyncEngine(
            for: database, tableNames: ["photos"], container: cloud.container(user: "alice"),
            configuration: SyncEngineConfiguration(deviceID: id, schedule: nil, blobAssetThreshold: 1_000),
            startImmediately: false)
        return (database, engine)
    }

    @Test func aLargeBlobTravelsAsAnAssetAndASmallOneInline() async throws {
        let cloud = MockCloud()
        let (a, engineA) = try await device("a", cloud: cloud)
        let (b, engineB) = try await device("b", cloud: cloud)
        let large = Data((0..<2_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let small = Data([1, 2, 3])
        try await a.write { db in
            try db.execute(sql: "INSERT INTO photos VALUES ('big', 'large', ?), ('tiny', 'small', ?), ('again', 'same bytes', ?)",
                           arguments: [large, small, large])
        }
        try await engineA.syncChanges()
        let records = cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice"))
        let big = try #require(records.first { $0.id.name == "big:photos" })
        guard case .asset(let reference)? = big.fields["bytes"] else {
            Issue.record("the large value was sent inline")
            return
        }
        #expect(reference.size == Int64(large.count))
        #expect(cloud.uploadCount(ofAsset: reference.hash) == 1)
        #expect(records.first { $0.id.name == "tiny:photos" }?.fields["bytes"] == .bytes(small))

        try await engineB.syncChanges()
        let received = try await b.read { db in
            try Data.fetchAll(db, sql: "SELECT bytes FROM photos ORDER BY id")
        }
        #expect(received == [large, large, small])
    }
}
