import Foundation
import Testing

@testable import StrataCloud

/// Accounts, injected faults, request counts and assets.
@Suite(.timeLimit(.minutes(5))) struct MockCloudFaultTests {
    let cloud = MockCloud()
    let zone = CloudZoneID(name: "zone", owner: "alice")

    @Test func aSignedOutAccountFailsEveryRequest() async throws {
        let container = cloud.container(user: "alice")
        cloud.setAccountStatus(.noAccount, for: "alice")
        #expect(try await container.accountStatus() == .noAccount)
        await #expect(throws: CloudError.notAuthenticated) { _ = try await container.currentUser() }
        await #expect(throws: CloudError.notAuthenticated) { try await container.privateDatabase.saveZones([self.zone]) }
        cloud.setAccountStatus(.available, for: "alice")
        try await container.privateDatabase.saveZones([zone])
    }

    @Test func injectedFailuresHitTheNamedOperationsOnly() async throws {
        let database = cloud.container(user: "alice").privateDatabase
        cloud.failNextRequests(2, with: .serviceUnavailable(retryAfter: nil), operations: [.modifyRecords])
        try await database.saveZones([zone])
        for _ in 0..<2 {
            await #expect(throws: CloudError.serviceUnavailable(retryAfter: nil)) {
                _ = try await database.modifyRecords(
                    saving: [CloudRecord(id: CloudRecordID(name: "r", zone: self.zone), type: "t")], deleting: [])
            }
        }
        #expect(cloud.records(in: zone).isEmpty)
        _ = try await database.modifyRecords(saving: [CloudRecord(id: CloudRecordID(name: "r", zone: zone), type: "t")], deleting: [])
        #expect(cloud.records(in: zone).count == 1)
        #expect(cloud.requestCount(.modifyRecords) == 3)
    }

    @Test func aReorderedPageArrivesBackToFrontOnce() async throws {
        let database = cloud.container(user: "alice").privateDatabase
        try await database.saveZones([zone])
        for name in ["a", "b", "c"] {
            _ = try await database.modifyRecords(saving: [CloudRecord(id: CloudRecordID(name: name, zone: zone), type: "t")], deleting: [])
        }
        _ = try await database.modifyRecords(saving: [], deleting: [CloudRecordID(name: "b", zone: zone)])
        cloud.reorderNextFetches(1)
        let reordered = try await database.fetchZoneChanges(zone, since: nil, limit: 10)
        #expect(reordered.changed.map(\.id.name) == ["c", "a"])
        let next = try await database.fetchZoneChanges(zone, since: nil, limit: 10)
        #expect(next.changed.map(\.id.name) == ["a", "c"])
        #expect(next.deleted.map(\.id.name) == ["b"])
        #expect(next.token == reordered.token)
    }

    @Test func aLostResponseStillChangesTheCloud() async throws {
        let database = cloud.container(user: "alice").privateDatabase
        try await database.saveZones([zone])
        cloud.loseNextResponses(1)
        await #expect(throws: CloudError.networkFailure) {
            _ = try await database.modifyRecords(
                saving: [CloudRecord(id: CloudRecordID(name: "r", zone: self.zone), type: "t")], deleting: [])
        }
        #expect(cloud.records(in: zone).count == 1)
    }

    func asset(_ text: String) -> CloudAsset {
        let data = Data(text.utf8)
        return CloudAsset(
            hash: "hash-\(text)", size: Int64(data.count), chunkSize: 1 << 20,
            chunks: [CloudAsset.Chunk(data: data, encoding: 0, size: Int64(data.count), crc32: CRC32.checksum(index: 0, data: data))])
    }

    @Test func assetsAreStoredOnceByHash() async throws {
        let database = cloud.container(user: "alice").privateDatabase
        #expect(try await database.missingAssets(["hash-a"]) == ["hash-a"])
        try await database.uploadAssets([asset("a")])
        try await database.uploadAssets([asset("a")])
        #expect(cloud.uploadCount(ofAsset: "hash-a") == 1)
        #expect(try await database.missingAssets(["hash-a", "hash-b"]) == ["hash-b"])
        #expect(try await database.fetchAsset("hash-a") == asset("a"))
        await #expect(throws: CloudError.assetNotFound("hash-b")) { _ = try await database.fetchAsset("hash-b") }
    }

    @Test func aDamagedUploadIsRefused() async throws {
        let database = cloud.container(user: "alice").privateDatabase
        var damaged = asset("a")
        damaged.chunks[0].crc32 ^= 1
        await #expect(throws: CloudError.invalidAsset("hash-a", reason: "chunk 0 fails its CRC-32")) {
            try await database.uploadAssets([damaged])
        }
        #expect(CRC32.checksum(Data("123456789".utf8)) == 0xCBF4_3926)  // the standard check value
    }
}
