import Foundation
import StrataSync
import Testing

/// End-to-end encryption's part of the cloud (issue #28): users' public keys, the keys a share
/// carries for its participants, and sealed assets, the same on every cloud.
@Suite(.timeLimit(.minutes(5))) struct CloudEncryptionTests {
    var cloud: TestCloud { TestCloud.current }
    let zone = CloudZoneID(name: "zone", owner: "alice")
    let game = CloudRecordID(name: "g1", zone: CloudZoneID(name: "zone", owner: "alice"))

    func key(_ byte: UInt8) -> Data { Data(repeating: byte, count: CloudPublicKeyError.requiredSize) }

    // MARK: Public keys

    @Test(arguments: CloudKind.available) func aPublishedKeyIsSeenByOtherUsersAndReplacedByItsOwner(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice")
            let bob = cloud.container(user: "bob")
            #expect(try await bob.publicKeys(of: ["alice"]) == [:])
            try await alice.publishPublicKey(key(1))
            #expect(try await bob.publicKeys(of: ["alice"]) == ["alice": key(1)])
            try await alice.publishPublicKey(key(2))
            #expect(try await bob.publicKeys(of: ["alice", "bob"]) == ["alice": key(2)])
            try await bob.publishPublicKey(key(3))
            #expect(try await alice.publicKeys(of: ["alice", "bob", "carol"]) == ["alice": key(2), "bob": key(3)])
            // Asking twice for a user, or for nobody, is no error.
            #expect(try await alice.publicKeys(of: ["bob", "bob"]) == ["bob": key(3)])
            #expect(try await alice.publicKeys(of: []) == [:])
        }
    }

    @Test(arguments: CloudKind.available) func aKeyOfAnotherSizeIsRefusedAndChangesNothing(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice")
            try await alice.publishPublicKey(key(1))
            for size in [0, 1, 31, 33, 64] {
                await #expect(throws: CloudPublicKeyError.wrongSize(size)) {
                    try await alice.publishPublicKey(Data(repeating: 9, count: size))
                }
            }
            #expect(try await cloud.container(user: "bob").publicKeys(of: ["alice"]) == ["alice": key(1)])
        }
    }

    @Test(arguments: CloudKind.available) func aLookupOfMoreUsersThanTheLimitIsRefused(_ kind: CloudKind) async throws {
        try await kind.run(limits: CloudLimits(maximumItemsPerRequest: 3)) {
            let alice = cloud.container(user: "alice")
            try await alice.publishPublicKey(key(1))
            #expect(try await alice.publicKeys(of: ["alice", "b", "c"]) == ["alice": key(1)])
            await #expect(throws: CloudError.limitExceeded) { _ = try await alice.publicKeys(of: ["alice", "b", "c", "d"]) }
        }
    }

    @Test(arguments: CloudKind.available) func aUserPublishesOnlyTheirOwnKey(_ kind: CloudKind) async throws {
        try await kind.run {
            // The API names no user: each container publishes for its own.
            try await cloud.container(user: "mallory").publishPublicKey(key(7))
            try await cloud.container(user: "alice").publishPublicKey(key(1))
            try await cloud.container(user: "mallory").publishPublicKey(key(8))
            let keys = try await cloud.container(user: "bob").publicKeys(of: ["alice", "mallory"])
            #expect(keys == ["alice": key(1), "mallory": key(8)])
        }
    }

    // MARK: Wrapped keys

    func seedShare(wrappedKeys: [String: Data]) async throws -> CloudShare {
        let alice = cloud.container(user: "alice").privateDatabase
        try await alice.saveZones([zone])
        _ = try await alice.modifyRecords(saving: [CloudRecord(id: game, type: "games")], deleting: [])
        var share = CloudShare(rootRecordID: game, title: "Poker")
        share.participants.append(CloudShare.Participant(user: "bob", permission: .readOnly))
        share.wrappedKeys = wrappedKeys
        return try await alice.saveShare(share)
    }

    @Test(arguments: CloudKind.available) func wrappedKeysTravelWithTheShareAndASaveReplacesThem(_ kind: CloudKind) async throws {
        try await kind.run {
            let first: [String: Data] = ["v1:bob": Data([1, 2, 3]), "v1:alice": Data(repeating: 0xff, count: 80), "v1:é": Data()]
            var share = try await seedShare(wrappedKeys: first)
            #expect(share.wrappedKeys == first)
            let alice = cloud.container(user: "alice").privateDatabase
            #expect(try await alice.fetchShare(rootRecordID: game).wrappedKeys == first)
            let bob = cloud.container(user: "bob")
            #expect(try await bob.acceptShare(url: share.url).wrappedKeys == first)
            #expect(try await bob.sharedDatabase.fetchShare(rootRecordID: game).wrappedKeys == first)

            let second: [String: Data] = ["v2:bob": Data([4, 5])]
            share.wrappedKeys = second
            share = try await alice.saveShare(share)
            #expect(share.wrappedKeys == second)
            #expect(try await bob.sharedDatabase.fetchShare(rootRecordID: game).wrappedKeys == second)

            share.wrappedKeys = [:]
            share = try await alice.saveShare(share)
            #expect(share.wrappedKeys.isEmpty)
            #expect(try await alice.fetchShare(rootRecordID: game).wrappedKeys.isEmpty)
        }
    }

    @Test(arguments: CloudKind.available) func tooManyWrappedKeysAreRefusedWhole(_ kind: CloudKind) async throws {
        try await kind.run {
            let kept: [String: Data] = ["v1:bob": Data([1])]
            var share = try await seedShare(wrappedKeys: kept)
            let alice = cloud.container(user: "alice").privateDatabase
            share.wrappedKeys = Dictionary(uniqueKeysWithValues: (0...CloudShare.maximumWrappedKeys).map { ("k\($0)", Data([1])) })
            await #expect(throws: CloudError.limitExceeded) { _ = try await alice.saveShare(share) }
            share.wrappedKeys = ["big": Data(count: CloudShare.maximumWrappedKeyBytes)]
            await #expect(throws: CloudError.limitExceeded) { _ = try await alice.saveShare(share) }
            #expect(try await alice.fetchShare(rootRecordID: game).wrappedKeys == kept)
        }
    }

    // MARK: Sealed assets

    /// An asset of sealed chunks named by a hash no content has.
    func sealedAsset(_ parts: [Data], name: String = String(repeating: "ab", count: 32)) -> CloudAsset {
        CloudAsset(
            hash: name, size: Int64(parts.reduce(0) { $0 + $1.count }), chunkSize: 1 << 20,
            chunks: parts.enumerated().map { index, data in
                CloudAsset.Chunk(
                    data: data, encoding: CloudAsset.Chunk.sealedEncoding, size: Int64(data.count),
                    crc32: CloudAsset.checksum(ofChunk: index, data: data))
            })
    }

    @Test(arguments: CloudKind.available) func aSealedAssetIsStoredUnderItsKeyedNameAndFetchedAsIs(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice").privateDatabase
            let asset = sealedAsset([Data("ciphertext one".utf8), Data("two".utf8)])
            #expect(asset.isSealed)
            try await alice.uploadAssets([asset])
            #expect(try await alice.missingAssets([asset.hash]).isEmpty)
            #expect(try await alice.fetchAsset(asset.hash) == asset)
        }
    }

    @Test(arguments: CloudKind.available) func anAssetMixingSealedAndOpenChunksIsRefused(_ kind: CloudKind) async throws {
        try await kind.run {
            let alice = cloud.container(user: "alice").privateDatabase
            var mixed = sealedAsset([Data("sealed".utf8), Data("open".utf8)])
            mixed.chunks[1].encoding = CloudAsset.Chunk.storedEncoding
            await #expect(throws: CloudError.invalidAsset(mixed.hash, reason: "chunk 1 is not sealed, unlike chunk 0")) {
                try await alice.uploadAssets([mixed])
            }
            var short = sealedAsset([Data("sealed".utf8)], name: String(repeating: "cd", count: 32))
            short.chunks[0].size += 1
            short.size += 1
            await #expect(throws: CloudError.invalidAsset(short.hash, reason: "sealed chunk 0 holds 6 bytes, not 7")) {
                try await alice.uploadAssets([short])
            }
            let missing = try await alice.missingAssets([mixed.hash, short.hash])
            #expect(missing == Set([mixed.hash, short.hash]))
        }
    }
}
