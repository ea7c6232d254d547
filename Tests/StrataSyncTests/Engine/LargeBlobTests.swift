import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// A plain BLOB value syncs inside its record when small, and as an asset above the threshold:
/// the record stays small, the content goes up once and arrives as the column's bytes.
@Suite(.timeLimit(.minutes(2))) struct LargeBlobTests {
    static let schema = "CREATE TABLE photos (id TEXT PRIMARY KEY NOT NULL, caption TEXT, bytes BLOB)"

    func device(_ id: String, cloud: MockCloud) async throws -> (DatabaseQueue, SyncEngine) {
        let device = try await SyncTestDevice(
            id, cloud: cloud, time: nil, schema: Self.schema, tables: ["photos"], blobAssetThreshold: 1_000)
        return (device.database, device.engine)
    }

    @Test func aLargeBlobTravelsAsAnAssetAndASmallOneInline() async throws {
        let cloud = MockCloud()
        let (a, engineA) = try await device("a", cloud: cloud)
        let (b, engineB) = try await device("b", cloud: cloud)
        let large = Data((0..<2_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let small = Data([1, 2, 3])
        try await a.write { db in
            try db.execute(
                sql: "INSERT INTO photos VALUES ('big', 'large', ?), ('tiny', 'small', ?), ('again', 'same bytes', ?)",
                arguments: [large, small, large])
        }
        try await engineA.syncChanges()
        var records: [CloudRecord] = []
        for record in cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")) {
            records.append(try await engineA.openCloudRecord(record))
        }
        let big = try #require(records.first { $0.id.name == "big:photos" })
        guard case .asset(let reference)? = big.fields["bytes"] else {
            Issue.record("the large value was sent inline")
            return
        }
        #expect(reference.size == Int64(large.count))
        let name = try await engineA.cloudAssetName(ofContent: reference.hash, in: CloudZoneID(name: "strata.default", owner: "alice"))
        #expect(cloud.uploadCount(ofAsset: name) == 1)
        #expect(records.first { $0.id.name == "tiny:photos" }?.fields["bytes"] == .bytes(small))

        try await engineB.syncChanges()
        let received = try await b.read { db in
            try Data.fetchAll(db, sql: "SELECT bytes FROM photos ORDER BY id")
        }
        #expect(received == [large, large, small])
    }

    static let albumSchema = """
        CREATE TABLE albums (id TEXT PRIMARY KEY NOT NULL, title TEXT);
        CREATE TABLE photos (id TEXT PRIMARY KEY NOT NULL, albumID TEXT REFERENCES albums(id) ON DELETE CASCADE, bytes BLOB);
        """

    func albumDevice(_ id: String, cloud: MockCloud, fetchPageSize: Int) async throws -> (DatabaseQueue, SyncEngine) {
        let device = try await SyncTestDevice(
            id, cloud: cloud, time: nil, schema: Self.albumSchema, tables: ["albums", "photos"], fetchPageSize: fetchPageSize,
            blobAssetThreshold: 1_000)
        return (device.database, device.engine)
    }

    /// A child whose record arrives in an earlier page than its parent's (the parent was
    /// edited after the child was saved) waits for it, and is then applied with its bytes,
    /// never with the content's hash (issue #24, item 2).
    @Test(arguments: [1, 2, 3, 200])
    func aLargeBlobOfAChildThatWaitedForItsParentArrivesAsBytes(fetchPageSize: Int) async throws {
        let cloud = MockCloud()
        let (a, engineA) = try await albumDevice("a", cloud: cloud, fetchPageSize: 200)
        let (b, engineB) = try await albumDevice("b", cloud: cloud, fetchPageSize: fetchPageSize)
        let large = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let other = Data((0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try await a.write { db in
            try db.execute(sql: "INSERT INTO albums (id, title) VALUES ('holiday', 'Holiday')")
            try db.execute(
                sql: "INSERT INTO photos (id, albumID, bytes) VALUES ('beach', 'holiday', ?), ('hill', 'holiday', ?)",
                arguments: [large, other])
        }
        try await engineA.syncChanges()
        // The parent changes after its children: the feed now lists the children first.
        try await a.write { db in try db.execute(sql: "UPDATE albums SET title = 'Holiday 2026'") }
        try await engineA.syncChanges()

        try await engineB.syncChanges()
        let received = try await b.read { db in
            try db.fetchAll(sql: "SELECT id, typeof(bytes), bytes FROM photos ORDER BY id") { row in
                (try row[0] as String, try row[1] as String, try row[2] as Data?)
            }
        }
        #expect(received.map(\.0) == ["beach", "hill"])
        #expect(received.map(\.1) == ["blob", "blob"])
        #expect(received.map(\.2) == [large, other])
        #expect(try await engineB.pendingCount() == 0)
        // Nothing kept for records no longer waiting.
        let kept = try await b.write { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.waiting_content") }
        #expect(kept == 0)
    }

    /// Pages delivered back to front (children first) with a page of one.
    @Test func aLargeBlobSurvivesReorderedPages() async throws {
        let cloud = MockCloud()
        let (a, engineA) = try await albumDevice("a", cloud: cloud, fetchPageSize: 200)
        let (b, engineB) = try await albumDevice("b", cloud: cloud, fetchPageSize: 1)
        let large = Data((0..<4_000).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        try await a.write { db in
            try db.execute(sql: "INSERT INTO albums (id, title) VALUES ('holiday', 'Holiday')")
            try db.execute(sql: "INSERT INTO photos (id, albumID, bytes) VALUES ('beach', 'holiday', ?)", arguments: [large])
        }
        try await engineA.syncChanges()
        cloud.reorderNextFetches(3)
        try await engineB.syncChanges()
        try await engineB.syncChanges()
        let bytes = try await b.read { db in try Data.fetchOne(db, sql: "SELECT bytes FROM photos") }
        #expect(bytes == large)
    }
}
