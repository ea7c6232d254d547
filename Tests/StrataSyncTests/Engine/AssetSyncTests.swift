import Foundation
import StrataAssets
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// A column of asset ids syncs the content by hash: uploaded once, downloaded only when
/// missing, never recompressed.
@Suite(.timeLimit(.minutes(5))) struct AssetSyncTests {
    static let schema =
        SyncTestDevice.schemaSQL + """
            ALTER TABLE games ADD COLUMN cover TEXT;
            """

    func device(_ id: String, cloud: MockCloud) async throws -> SyncTestDevice {
        let database = try DatabaseQueue()
        try await database.write { db in
            try db.execute(sql: Self.schema)
            try db.trackAssetColumn(table: "games", column: "cover")
        }
        return try await SyncTestDevice(id, cloud: cloud, schema: "", database: database)
    }

    static let cover = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 / 7) })

    @Test func contentIsUploadedOnceAndArrivesWhereMissing() async throws {
        let cloud = MockCloud()
        let a = try await device("a", cloud: cloud)
        let b = try await device("b", cloud: cloud)
        let id = try await a.database.write { db in
            let id = try db.putAsset(Self.cover).id
            try db.execute(sql: "INSERT INTO games (id, title, cover) VALUES ('g1', 'Poker', ?), ('g2', 'Chess', ?)", arguments: [id, id])
            return id
        }
        try await a.engine.syncChanges()
        // The cloud knows the content by a keyed name, never by its SHA-256.
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        let name = try await a.engine.cloudAssetName(ofContent: id.hexadecimal, in: zone)
        #expect(name != id.hexadecimal)
        #expect(cloud.uploadCount(ofAsset: id.hexadecimal) == 0)
        #expect(cloud.uploadCount(ofAsset: name) == 1)
        let record = try #require(try await a.cloudRecords(cloud, in: zone).first)
        #expect(record.fields["cover"] == .asset(CloudAssetReference(hash: id.hexadecimal, size: Int64(Self.cover.count))))

        try await b.engine.syncChanges()
        let received = try await b.database.read { db in try db.assetData(id) }
        #expect(received == Self.cover)
        #expect(cloud.requestCount(.fetchAsset) == 1)

        try await a.execute("INSERT INTO games (id, title, cover) VALUES ('g3', 'Go', '\(id.hexadecimal)')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        #expect(cloud.uploadCount(ofAsset: name) == 1)
        #expect(cloud.requestCount(.fetchAsset) == 1)
        #expect(try await b.rows().count == 3)
    }

    @Test func contentAlreadyHereIsNotDownloaded() async throws {
        let cloud = MockCloud()
        let a = try await device("a", cloud: cloud)
        let b = try await device("b", cloud: cloud)
        let id = try await a.database.write { db in
            let id = try db.putAsset(Self.cover).id
            try db.execute(sql: "INSERT INTO games (id, cover) VALUES ('g1', ?)", arguments: [id])
            return id
        }
        try await a.engine.syncChanges()
        try await b.database.write { db in _ = try db.putAsset(Self.cover) }
        try await b.engine.syncChanges()
        #expect(cloud.requestCount(.fetchAsset) == 0)
        #expect(try await b.database.read { db in try db.assetData(id) } == Self.cover)
    }
}
