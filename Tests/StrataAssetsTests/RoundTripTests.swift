import Foundation
import StrataAssets
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct RoundTripTests {
    /// Reads an asset back three ways (whole, sync reader, async chunks) and checks each.
    func expectRoundTrip(_ data: Data, store: AssetStore, sourceLocation: SourceLocation = #_sourceLocation) async throws -> AssetDescriptor
    {
        let descriptor = try await store.put(data)
        #expect(descriptor.size == Int64(data.count), sourceLocation: sourceLocation)
        #expect(descriptor.id == AssetID(of: data), sourceLocation: sourceLocation)
        #expect(try await store.get(descriptor.id) == data, sourceLocation: sourceLocation)

        let reader = try store.open(descriptor.id)
        var streamed = Data()
        var chunkCount = 0
        while let chunk = try reader.next() {
            #expect(chunk.count <= descriptor.chunkSize, sourceLocation: sourceLocation)
            streamed.append(chunk)
            chunkCount += 1
        }
        #expect(streamed == data, sourceLocation: sourceLocation)
        #expect(chunkCount == descriptor.chunkCount, sourceLocation: sourceLocation)

        var asynchronous = Data()
        for try await chunk in store.chunks(descriptor.id) {
            asynchronous.append(chunk)
        }
        #expect(asynchronous == data, sourceLocation: sourceLocation)
        return descriptor
    }

    @Test func empty() async throws {
        let (_, store) = try makeStore()
        let descriptor = try await expectRoundTrip(Data(), store: store)
        #expect(descriptor.chunkCount == 0)
        #expect(descriptor.id.hexadecimal == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(descriptor.compressionReason == "empty")
    }

    @Test func oneByte() async throws {
        let (_, store) = try makeStore()
        let descriptor = try await expectRoundTrip(Data([0x2A]), store: store)
        #expect(descriptor.chunkCount == 1)
        #expect(descriptor.compression == .none)  // one byte never deflates smaller
    }

    @Test(arguments: [-1, 0, 1])
    func chunkBoundaries(offset: Int) async throws {
        let chunkSize = 4096
        let (_, store) = try makeStore(chunkSize: chunkSize)
        for chunks in [1, 2, 3] {
            let count = chunks * chunkSize + offset
            let data = TestBytes.text(count: count, seed: UInt64(count))
            let descriptor = try await expectRoundTrip(data, store: store)
            #expect(descriptor.chunkCount == (count + chunkSize - 1) / chunkSize)
            #expect(descriptor.compression == .deflate)
        }
    }

    @Test func defaultChunkBoundary() async throws {
        let (_, store) = try makeStore()
        let data = TestBytes.text(count: 256 * 1024 * 2)
        let descriptor = try await expectRoundTrip(data, store: store)
        #expect(descriptor.chunkCount == 2)
        #expect(descriptor.chunkSize == 256 * 1024)
    }

    @Test func streamedPutInOddPieces() throws {
        let (_, store) = try makeStore(chunkSize: 4096)
        let data = TestBytes.text(count: 50_000)
        let descriptor = try store.put { writer in
            var offset = 0
            var piece = 1
            while offset < data.count {
                let end = min(offset + piece, data.count)
                try writer.write(data[offset..<end])
                offset = end
                piece = piece * 3 % 10_007 + 1
            }
        }
        #expect(descriptor.id == AssetID(of: data))
        #expect(try store.get(descriptor.id) == data)
    }

    @Test func fileRoundTrip() throws {
        let directory = try TemporaryDirectory()
        let (_, store) = try makeStore(chunkSize: 8192)
        let data = TestBytes.text(count: 100_003)
        let source = directory.url.appendingPathComponent("source.txt")
        try data.write(to: source)
        let descriptor = try store.put(contentsOf: source)
        let destination = directory.url.appendingPathComponent("copy.txt")
        try store.export(descriptor.id, to: destination)
        #expect(try Data(contentsOf: destination) == data)
    }

    @Test func incompressibleDataIsStoredAsIs() async throws {
        let (_, store) = try makeStore()
        let data = TestBytes.random(count: 600_000)
        let descriptor = try await expectRoundTrip(data, store: store)
        #expect(descriptor.compression == .none)
        #expect(descriptor.compressionReason.hasPrefix("sample:1."))
        #expect(descriptor.storedSize == Int64(data.count))
    }

    @Test func knownCompressedFormatsAreNotSampled() async throws {
        let (_, store) = try makeStore()
        // A JPEG header followed by highly compressible bytes: the signature alone decides.
        var jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0])
        jpeg.append(Data(repeating: 0, count: 10_000))
        let descriptor = try await expectRoundTrip(jpeg, store: store)
        #expect(descriptor.compression == .none)
        #expect(descriptor.compressionReason == "format:jpeg")

        var png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        png.append(Data(repeating: 1, count: 10_000))
        #expect(try await store.put(png).compressionReason == "format:png")
        var zip = Data([0x50, 0x4B, 0x03, 0x04])
        zip.append(Data(repeating: 2, count: 10_000))
        #expect(try await store.put(zip).compressionReason == "format:zip")
    }

    @Test func compressibleDataIsCompressed() async throws {
        let (_, store) = try makeStore()
        let data = TestBytes.text(count: 1_000_000)
        let descriptor = try await expectRoundTrip(data, store: store)
        #expect(descriptor.compression == .deflate)
        #expect(descriptor.compressionRatio < 0.6)
        #expect(descriptor.compressionReason.hasPrefix("sample:0."))
    }

    @Test func compressionCanBeDisabled() throws {
        let (_, store) = try makeStore(compressionLevel: 0)
        let data = TestBytes.text(count: 10_000)
        let descriptor = try store.put(data)
        #expect(descriptor.compression == .none)
        #expect(descriptor.compressionReason == "disabled")
        #expect(try store.get(descriptor.id) == data)
    }

    @Test func expectedContentIsEnforced() throws {
        let (queue, store) = try makeStore()
        let data = TestBytes.text(count: 1000)
        let wrong = AssetID(of: Data("other".utf8))
        #expect(throws: AssetError.unexpectedContent(expected: wrong, actual: AssetID(of: data))) {
            try store.put(expecting: wrong) { try $0.write(data) }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM strata_asset_chunks") } == 0)
        #expect(try store.descriptors().isEmpty)
    }

    @Test func missingAssetIsNotFound() async throws {
        let (_, store) = try makeStore()
        let id = AssetID(of: Data("missing".utf8))
        await #expect(throws: AssetError.notFound(id)) { try await store.get(id) }
        #expect(throws: AssetError.notFound(id)) { try store.open(id) }
        await #expect(throws: AssetError.notFound(id)) {
            for try await _ in store.chunks(id) {}
        }
    }

    @Test func assetIDColumnRepresentation() throws {
        let id = AssetID(of: Data("hello".utf8))
        #expect(AssetID.fromDatabaseValue(id.databaseValue) == id)
        #expect(AssetID(hexadecimal: id.hexadecimal.uppercased()) == id)
        #expect(AssetID(hexadecimal: "xyz") == nil)
        #expect(AssetID.fromDatabaseValue(.integer(1)) == nil)
        #expect(id.digestBytes.count == 32)
    }
}
