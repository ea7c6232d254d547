import Foundation
import StrataAssets
import StrataSQLite
import Testing

/// Assets move between databases in their stored form, checked before they are kept.
@Suite(.timeLimit(.minutes(5))) struct StoredAssetTests {
    static let content = Data((0..<700_000).map { UInt8(truncatingIfNeeded: $0 % 251) })

    func stored() throws -> StoredAsset {
        let source = try DatabaseQueue()
        return try source.write { db in
            try AssetSchema.createTables(db)
            let id = try db.putAsset(Self.content).id
            return try #require(try db.storedAsset(id))
        }
    }

    @Test func aStoredAssetArrivesIntactWithoutRecompressing() throws {
        let asset = try stored()
        #expect(asset.chunks.count > 1)
        let target = try DatabaseQueue()
        let descriptor = try target.write { db in try db.insertStoredAsset(asset) }
        #expect(descriptor.id == asset.id)
        #expect(try target.read { db in try db.assetData(asset.id) } == Self.content)
        #expect(try target.read { db in try db.storedAsset(asset.id) } == asset)
        #expect(try target.write { db in try db.insertStoredAsset(asset) }.id == asset.id)  // already there
    }

    @Test func aDamagedChunkIsRefusedAndNothingIsKept() throws {
        var asset = try stored()
        asset.chunks[1].data[10] ^= 0xFF
        let target = try DatabaseQueue()
        #expect {
            try target.write { db in try db.insertStoredAsset(asset) }
        } throws: { error in
            guard case AssetError.corrupted(let id, let chunk, _) = error else { return false }
            return id == asset.id && chunk == 1
        }
        #expect(try target.read { db in try db.assetExists(asset.id) } == false)
    }

    @Test func contentThatIsNotTheNamedAssetIsRefused() throws {
        let asset = try stored()
        var renamed = asset
        renamed.id = AssetID(of: Data("something else".utf8))
        let target = try DatabaseQueue()
        #expect(throws: AssetError.unexpectedContent(expected: renamed.id, actual: asset.id)) {
            try target.write { db in try db.insertStoredAsset(renamed) }
        }
        #expect(try target.read { db in try db.assetExists(renamed.id) } == false)
    }
}
