import Crypto
import Foundation
import StrataSync
import Testing

/// Assets: stored whole and checked on the way in, fetched by hash, reachable by their
/// uploader and the users they share with, and by nobody else.
@Suite(.timeLimit(.minutes(5))) struct CloudAssetTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")

    /// The SHA-256 of what `asset(text, chunks:)` holds: stores check it.
    func hash(_ text: String, chunks: Int = 1) -> String { asset(text, chunks: chunks).hash }

    func asset(_ text: String, chunks: Int = 1) -> CloudAsset {
        let parts = (0..<chunks).map { Data("\(text)-\($0)".utf8) }
        let digest = SHA256.hash(data: parts.reduce(Data(), +)).map { String(format: "%02x", $0) }.joined()
        return CloudAsset(
            hash: digest, size: Int64(parts.reduce(0) { $0 + $1.count }), chunkSize: 1 << 20,
            chunks: parts.enumerated().map { index, data in
                CloudAsset.Chunk(data: data, encoding: 0, size: Int64(data.count), crc32: CloudAsset.checksum(ofChunk: index, data: data))
            })
    }

    @Test(arguments: CloudKind.available) func anAssetIsStoredOnceAndFetchedWhole(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice").privateDatabase
            #expect(try await alice.missingAssets([hash("a", chunks: 3)]) == [hash("a", chunks: 3)])
            try await alice.uploadAssets([asset("a", chunks: 3)])
            try await alice.uploadAssets([asset("a", chunks: 3)])
            #expect(try await alice.missingAssets([hash("a", chunks: 3), hash("b")]) == [hash("b")])
            #expect(try await alice.fetchAsset(hash("a", chunks: 3)) == asset("a", chunks: 3))
            await #expect(throws: CloudError.assetNotFound(hash("b"))) { _ = try await alice.fetchAsset(hash("b")) }
        }
    }

    @Test(arguments: CloudKind.available) func aDamagedAssetIsRefusedWhole(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice").privateDatabase
            var damaged = asset("a", chunks: 2)
            damaged.chunks[1].crc32 ^= 1
            await #expect(throws: CloudError.invalidAsset(hash("a", chunks: 2), reason: "chunk 1 fails its CRC-32")) {
                try await alice.uploadAssets([asset("b"), damaged])
            }
            var short = asset("c")
            short.size += 1
            await #expect(throws: CloudError.invalidAsset(hash("c"), reason: "chunk sizes add up to 3, not 4")) {
                try await alice.uploadAssets([short])
            }
            let missing = try await alice.missingAssets([hash("a", chunks: 2), hash("b"), hash("c")])
            #expect(missing == [hash("a", chunks: 2), hash("b"), hash("c")])
        }
    }

    @Test(arguments: CloudKind.available) func aStrangerCannotReadAnotherUsersAssetButAParticipantAndTheOwnerShareThem(
        _ kind: CloudKind
    ) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice")
            try await alice.privateDatabase.uploadAssets([asset("a")])
            let bob = cloud.container(user: "bob")
            #expect(try await bob.privateDatabase.missingAssets([hash("a")]) == [hash("a")])
            await #expect(throws: CloudError.assetNotFound(hash("a"))) { _ = try await bob.privateDatabase.fetchAsset(hash("a")) }

            try await alice.privateDatabase.saveZones([zone])
            let game = CloudRecordID(name: "g1", zone: zone)
            _ = try await alice.privateDatabase.modifyRecords(saving: [CloudRecord(id: game, type: "games")], deleting: [])
            var share = CloudShare(rootRecordID: game)
            share.participants.append(CloudShare.Participant(user: "bob", permission: .readWrite))
            share = try await alice.privateDatabase.saveShare(share)
            _ = try await bob.acceptShare(url: share.url)
            #expect(try await bob.sharedDatabase.fetchAsset(hash("a")) == asset("a"))
            // A participant's upload serves the owner.
            try await bob.sharedDatabase.uploadAssets([asset("b")])
            #expect(try await alice.privateDatabase.fetchAsset(hash("b")) == asset("b"))
            #expect(
                try await cloud.container(user: "carol").privateDatabase.missingAssets([hash("a"), hash("b")]) == [hash("a"), hash("b")])
        }
    }
}
