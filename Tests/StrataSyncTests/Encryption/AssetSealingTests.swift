import Crypto
import Foundation
import Testing

@testable import StrataSync

/// A sealed asset opens to the chunks that were sealed, under the key and name it was sealed
/// for, and to nothing else; what the cloud stores is a valid asset it cannot read.
@Suite(.timeLimit(.minutes(2))) struct AssetSealingTests {
    typealias F = EncryptionFixtures
    let key = ZoneKey.random(version: 1)

    static let shapes: [(String, [(Data, Int)])] = [
        ("empty", []),
        ("one raw chunk", [(F.content(100), 0)]),
        ("one empty raw chunk", [(Data(), 0)]),
        ("one compressed chunk", [(F.content(37, seed: 2), 1)]),
        ("one byte", [(Data([0xFF]), 0)]),
        (
            "mixed encodings",
            [(F.content(64, seed: 3), 0), (F.content(10, seed: 4), 1), (F.content(64, seed: 5), 0), (F.content(1, seed: 6), 1)]
        ),
        ("many chunks", (0..<200).map { (F.content($0 % 17 + 1, seed: UInt64($0)), $0 % 2) }),
        ("identical chunks", Array(repeating: (F.content(32, seed: 9), 0), count: 5)),
        ("encoding 255 with data", [(F.content(3), 255)]),
    ]

    @Test(arguments: 0..<shapes.count) func roundTrip(_ shape: Int) throws {
        let (what, chunks) = Self.shapes[shape]
        let asset = F.asset(chunks)
        let sealed = try AssetSealing.seal(asset, with: key)
        let opened = try AssetSealing.open(sealed, hash: asset.hash, with: key)
        #expect(opened == asset, "\(what)")
        #expect(opened.damage == nil, "\(what)")
        checkStored(sealed, of: asset)
    }

    @Test func bigContentRoundTripsThroughTheAssetStore() async throws {
        let content = F.content(3 * LargeBlobs.chunkSize + 12_345, seed: 77)
        let asset = LargeBlobs.asset(of: content)
        #expect(asset.chunks.count == 4)
        let sealed = try AssetSealing.seal(asset, with: key)
        checkStored(sealed, of: asset)
        let opened = try AssetSealing.open(sealed, hash: asset.hash, with: key)
        #expect(opened == asset)
        #expect(try await LargeBlobs.content(of: opened) == content)
    }

    @Test func emptyContentIsStoredAsOneSealedMarkerChunk() async throws {
        let asset = LargeBlobs.asset(of: Data())
        #expect(asset.chunks.isEmpty)
        let sealed = try AssetSealing.seal(asset, with: key)
        #expect(sealed.chunks.count == 1)
        #expect(sealed.isSealed)
        checkStored(sealed, of: asset)
        let opened = try AssetSealing.open(sealed, hash: asset.hash, with: key)
        #expect(opened == asset)
        #expect(try await LargeBlobs.content(of: opened) == Data())
    }

    /// What the cloud stores: every chunk sealed, sizes that add up, valid CRCs, a keyed name.
    func checkStored(_ sealed: CloudAsset, of asset: CloudAsset, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sealed.isSealed, sourceLocation: sourceLocation)
        #expect(sealed.damage == nil, sourceLocation: sourceLocation)
        #expect(sealed.chunks.count == max(asset.chunks.count, 1), sourceLocation: sourceLocation)
        for chunk in sealed.chunks {
            #expect(chunk.encoding == CloudAsset.Chunk.sealedEncoding, sourceLocation: sourceLocation)
            #expect(Int64(chunk.data.count) == chunk.size, sourceLocation: sourceLocation)
        }
        #expect(sealed.size == Int64(sealed.storedSize), sourceLocation: sourceLocation)
        #expect(sealed.chunkSize == asset.chunkSize, sourceLocation: sourceLocation)
        #expect(Self.isName(sealed.hash), sourceLocation: sourceLocation)
        #expect(sealed.hash != asset.hash, sourceLocation: sourceLocation)
        #expect(sealed.hash == AssetSealing.name(ofContent: asset.hash, with: key), sourceLocation: sourceLocation)
        for (plain, stored) in zip(asset.chunks, sealed.chunks) where plain.data.count >= 16 {
            #expect(stored.data.range(of: plain.data) == nil, "plaintext readable in a sealed chunk", sourceLocation: sourceLocation)
        }
    }

    static func isName(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    // MARK: Names

    @Test func namesAreKeyedAndStable() throws {
        let hash = F.sha256(F.content(10))
        let name = AssetSealing.name(ofContent: hash, with: key)
        #expect(Self.isName(name))
        #expect(name != hash)
        #expect(AssetSealing.name(ofContent: hash, with: key) == name)
        #expect(AssetSealing.name(ofContent: hash, with: ZoneKey(version: 1, key: key.key)) == name)
        #expect(AssetSealing.name(ofContent: hash, with: ZoneKey.random(version: 1)) != name)
        #expect(AssetSealing.name(ofContent: hash, with: ZoneKey.random(version: 2)) != name)
        #expect(AssetSealing.name(ofContent: F.sha256(F.content(11)), with: key) != name)
        #expect(AssetSealing.name(ofContent: hash.uppercased(), with: key) != name)
        #expect(Self.isName(AssetSealing.name(ofContent: "", with: key)))
    }

    @Test func sealingTwiceGivesTheSameBytes() throws {
        for (what, chunks) in Self.shapes {
            let asset = F.asset(chunks)
            let first = try AssetSealing.seal(asset, with: key)
            let second = try AssetSealing.seal(asset, with: ZoneKey(version: 1, key: key.key))
            #expect(first == second, "\(what)")
            let other = try AssetSealing.seal(asset, with: ZoneKey.random(version: 1))
            #expect(other.hash != first.hash, "\(what)")
            #expect(zip(other.chunks, first.chunks).allSatisfy { $0.data != $1.data }, "\(what)")
        }
    }

    // MARK: Tampering

    func mixedAsset() -> CloudAsset {
        F.asset([(F.content(40, seed: 1), 0), (F.content(40, seed: 2), 1), (F.content(40, seed: 3), 0)])
    }

    /// A chunk's CRC recomputed, as a cloud that rearranges chunks would do.
    static func resigned(_ asset: CloudAsset) -> CloudAsset {
        var asset = asset
        for index in asset.chunks.indices {
            asset.chunks[index].crc32 = CloudAsset.checksum(ofChunk: index, data: asset.chunks[index].data)
        }
        asset.size = asset.chunks.reduce(0) { $0 + $1.size }
        return asset
    }

    func expectTampered(
        _ sealed: CloudAsset, hash: String, _ what: String, with key: ZoneKey? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(throws: EncryptionError.tamperedAsset(hash), "\(what)", sourceLocation: sourceLocation) {
            try AssetSealing.open(sealed, hash: hash, with: key ?? self.key)
        }
    }

    @Test func rearrangedChunksAreRefused() throws {
        let asset = mixedAsset()
        let sealed = try AssetSealing.seal(asset, with: key)
        var swapped = sealed
        swapped.chunks.swapAt(0, 1)
        expectTampered(Self.resigned(swapped), hash: asset.hash, "chunks 0 and 1 swapped")
        var rotated = sealed
        rotated.chunks = Array(sealed.chunks[1...] + sealed.chunks[..<1])
        expectTampered(Self.resigned(rotated), hash: asset.hash, "chunks rotated")
        for dropped in sealed.chunks.indices {
            var shorter = sealed
            shorter.chunks.remove(at: dropped)
            expectTampered(Self.resigned(shorter), hash: asset.hash, "chunk \(dropped) dropped")
        }
        var last = sealed
        last.chunks.removeLast()
        expectTampered(Self.resigned(last), hash: asset.hash, "last chunk dropped")
        var appended = sealed
        appended.chunks.append(sealed.chunks[2])
        expectTampered(Self.resigned(appended), hash: asset.hash, "last chunk repeated")
        var duplicated = sealed
        duplicated.chunks[1] = sealed.chunks[0]
        expectTampered(Self.resigned(duplicated), hash: asset.hash, "chunk 0 twice")
    }

    /// A sealed asset always has a chunk (empty content seals a marker), so one without any
    /// was emptied by someone else.
    @Test func everyChunkDroppedIsRefused() throws {
        for content in [mixedAsset(), F.asset([])] {
            var emptied = try AssetSealing.seal(content, with: key)
            emptied.chunks = []
            emptied.size = 0
            expectTampered(emptied, hash: content.hash, "all \(content.chunks.count) chunks dropped")
        }
    }

    @Test func aChunkFromAnotherAssetIsRefused() throws {
        let asset = mixedAsset()
        let other = F.asset([(F.content(40, seed: 9), 0), (F.content(40, seed: 10), 1), (F.content(40, seed: 11), 0)])
        let sealed = try AssetSealing.seal(asset, with: key)
        let sealedOther = try AssetSealing.seal(other, with: key)
        for index in sealed.chunks.indices {
            var mixed = sealed
            mixed.chunks[index] = sealedOther.chunks[index]
            expectTampered(Self.resigned(mixed), hash: asset.hash, "chunk \(index) from another asset")
        }
        // The empty marker of one key does not stand in for empty content under another.
        let empty = F.asset([])
        var marker = try AssetSealing.seal(empty, with: ZoneKey.random(version: 1))
        marker.hash = AssetSealing.name(ofContent: empty.hash, with: key)
        expectTampered(marker, hash: empty.hash, "another key's empty marker")
    }

    @Test func flippingAnyByteOfAnyChunkIsRefused() throws {
        let asset = F.asset([(F.content(5, seed: 1), 0), (F.content(3, seed: 2), 1)])
        let sealed = try AssetSealing.seal(asset, with: key)
        for index in sealed.chunks.indices {
            for position in sealed.chunks[index].data.indices {
                for mask: UInt8 in [0x01, 0x80] {
                    var broken = sealed
                    broken.chunks[index].data[position] ^= mask
                    expectTampered(Self.resigned(broken), hash: asset.hash, "chunk \(index) byte \(position) ^ \(mask)")
                }
            }
            var truncated = sealed
            truncated.chunks[index].data.removeLast()
            expectTampered(Self.resigned(truncated), hash: asset.hash, "chunk \(index) truncated")
            var extended = sealed
            extended.chunks[index].data.append(0)
            expectTampered(Self.resigned(extended), hash: asset.hash, "chunk \(index) extended")
            var unsealed = sealed
            unsealed.chunks[index].encoding = 0
            expectTampered(unsealed, hash: asset.hash, "chunk \(index) marked raw")
        }
        let emptySealed = try AssetSealing.seal(F.asset([]), with: key)
        for position in emptySealed.chunks[0].data.indices {
            var broken = emptySealed
            broken.chunks[0].data[position] ^= 0x01
            expectTampered(Self.resigned(broken), hash: F.asset([]).hash, "empty marker byte \(position)")
        }
    }

    @Test func anAssetOpenedUnderAnotherNameOrHashIsRefused() throws {
        let asset = mixedAsset()
        let sealed = try AssetSealing.seal(asset, with: key)
        let otherHash = F.sha256(F.content(1, seed: 99))
        expectTampered(sealed, hash: otherHash, "opened as other content")
        expectTampered(sealed, hash: asset.hash.uppercased(), "opened with the hash in capitals")
        var renamed = sealed
        renamed.hash = AssetSealing.name(ofContent: otherHash, with: key)
        expectTampered(renamed, hash: asset.hash, "stored under another name")
        expectTampered(renamed, hash: otherHash, "stored and opened as other content")
        // Chunk count and index are bound, not the chunk size or the stored size.
        var resized = sealed
        resized.chunkSize = 7
        #expect(try AssetSealing.open(resized, hash: asset.hash, with: key).chunks == asset.chunks)
    }

    @Test func anotherKeyIsRefused() throws {
        let cases: [[(Data, Int)]] = [[], [(F.content(40), 0)], mixedAsset().chunks.map { ($0.data, $0.encoding) }]
        for chunks in cases {
            let asset = F.asset(chunks)
            let sealed = try AssetSealing.seal(asset, with: key)
            expectTampered(sealed, hash: asset.hash, "another key, \(chunks.count) chunks", with: ZoneKey.random(version: 1))
            expectTampered(sealed, hash: asset.hash, "another key and version", with: ZoneKey.random(version: 2))
        }
    }
}
