import Foundation
import StrataAssets
import StrataSQLite
import StrataTestSupport
import Testing

/// Damaged size columns: every read path must throw ``AssetError/corrupted(asset:chunk:reason:)``
/// naming the bad value, and never allocate from it (a huge recorded size used to trap the
/// process while allocating).
@Suite(.timeLimit(.minutes(5))) struct DamagedSizeTests {
    static let oneTebibyte: Int64 = 1 << 40

    /// Stores `data` in 4 KiB chunks and returns the asset's id and integer row id.
    func makeAsset(_ data: Data) throws -> (queue: DatabaseQueue, store: AssetStore, id: AssetID, rowID: Int64) {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let id = try store.put(data).id
        let rowID = try queue.read { db in
            try Int64.fetchOne(db, sql: "SELECT id FROM strata_assets WHERE sha256 = ?", arguments: [id])
        }
        return (queue, store, id, try #require(rowID))
    }

    /// Expects every way of reading `id` to fail with a corruption of `chunk` whose description
    /// contains `value`.
    func expectDamage(
        _ id: AssetID, chunk: Int?, naming value: String, store: AssetStore, queue: DatabaseQueue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        func matches(_ error: any Error) -> Bool {
            guard case AssetError.corrupted(let asset, let failedChunk, let reason) = error else { return false }
            return asset == id && failedChunk == chunk && reason.description.contains(value)
        }
        #expect(sourceLocation: sourceLocation, performing: { try store.get(id) }, throws: matches)
        await #expect(sourceLocation: sourceLocation, performing: { try await store.get(id) }, throws: matches)
        #expect(sourceLocation: sourceLocation, performing: { try queue.read { db in try db.assetData(id) } }, throws: matches)
        #expect(sourceLocation: sourceLocation, performing: { try queue.read { db in try db.readAsset(id) { _ in } } }, throws: matches)
        #expect(
            sourceLocation: sourceLocation,
            performing: {
                let reader = try store.open(id)
                while try reader.next() != nil {}
            }, throws: matches)
        await #expect(sourceLocation: sourceLocation, performing: { for try await _ in store.chunks(id) {} }, throws: matches)
        let directory = try TemporaryDirectory()
        #expect(
            sourceLocation: sourceLocation, performing: { try store.export(id, to: directory.url.appendingPathComponent("export")) },
            throws: matches)
    }

    // MARK: - The asset row

    @Test func hugeSizeAndChunkSizeInOneChunk() async throws {
        // The reported crash: every value agrees with the others, but a 1 TiB chunk is beyond
        // anything StrataAssets writes.
        let (queue, store, id, _) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE strata_assets SET size = ?, chunkSize = ?, chunkCount = 1 WHERE sha256 = ?",
                arguments: [Self.oneTebibyte, Self.oneTebibyte, id])
        }
        try await expectDamage(id, chunk: nil, naming: "chunk size \(Self.oneTebibyte)", store: store, queue: queue)
    }

    @Test func hugeSizeWithAConsistentChunkCount() async throws {
        // Size, chunk size and chunk count agree, but the chunk rows hold 10,000 bytes, not 1 TiB.
        let (queue, store, id, _) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE strata_assets SET size = ?, chunkCount = ? WHERE sha256 = ?",
                arguments: [Self.oneTebibyte, Self.oneTebibyte / 4096, id])
        }
        // Chunk 2 is the first row whose recorded size disagrees: 1,808 bytes, where a 1 TiB
        // asset would have a full 4,096.
        try await expectDamage(id, chunk: 2, naming: "recorded size 1808", store: store, queue: queue)
    }

    @Test func sizeBeyondInt64ChunkArithmetic() async throws {
        let (queue, store, id, _) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE strata_assets SET size = ?, chunkCount = 1 WHERE sha256 = ?",
                arguments: [Int64.max, id])
        }
        try await expectDamage(id, chunk: nil, naming: "size \(Int64.max)", store: store, queue: queue)
    }

    @Test func negativeSize() async throws {
        let (queue, store, id, _) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_assets SET size = -1, chunkCount = 0 WHERE sha256 = ?", arguments: [id])
        }
        try await expectDamage(id, chunk: nil, naming: "negative size -1", store: store, queue: queue)
    }

    @Test(arguments: [0, -4096, 65 * 1024 * 1024])
    func chunkSizeOutOfRange(chunkSize: Int) async throws {
        let (queue, store, id, _) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_assets SET chunkSize = ? WHERE sha256 = ?", arguments: [chunkSize, id])
        }
        try await expectDamage(id, chunk: nil, naming: "chunk size \(chunkSize)", store: store, queue: queue)
    }

    @Test func chunkCountDisagreesWithSize() async throws {
        let (queue, store, id, _) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_assets SET chunkCount = 2 WHERE sha256 = ?", arguments: [id])
        }
        try await expectDamage(id, chunk: nil, naming: "chunk count 2", store: store, queue: queue)
    }

    // MARK: - The chunk rows

    @Test func fewerChunkRowsThanTheSizeNeeds() async throws {
        // Three full chunks stored; the asset row claims five, consistently.
        let (queue, store, id, _) = try makeAsset(TestBytes.random(count: 3 * 4096))
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_assets SET size = ?, chunkCount = 5 WHERE sha256 = ?", arguments: [5 * 4096, id])
        }
        try await expectDamage(id, chunk: 3, naming: "missing row", store: store, queue: queue)
    }

    @Test func chunkRowBeyondTheChunkCount() async throws {
        let (queue, store, id, rowID) = try makeAsset(TestBytes.random(count: 3 * 4096))
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO strata_asset_chunks (asset, chunk, size, encoding, crc32, data)
                    SELECT asset, 7, size, encoding, crc32, data FROM strata_asset_chunks WHERE asset = ? AND chunk = 0
                    """,
                arguments: [rowID])
        }
        try await expectDamage(id, chunk: 7, naming: "index 7", store: store, queue: queue)
    }

    @Test func chunkRowLargerThanTheChunkSize() async throws {
        let (queue, store, id, rowID) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_asset_chunks SET size = 8192 WHERE asset = ? AND chunk = 0", arguments: [rowID])
        }
        try await expectDamage(id, chunk: 0, naming: "recorded size 8192", store: store, queue: queue)
    }

    @Test func chunkRowWithAHugeSize() async throws {
        let (queue, store, id, rowID) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE strata_asset_chunks SET size = ? WHERE asset = ? AND chunk = 1",
                arguments: [Self.oneTebibyte, rowID])
        }
        try await expectDamage(id, chunk: 1, naming: "recorded size \(Self.oneTebibyte)", store: store, queue: queue)
    }

    @Test func chunkRowSizesWhoseSumOverflows() async throws {
        // An integer sum() of these would overflow: the check must still report corruption.
        let (queue, store, id, rowID) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_asset_chunks SET size = ? WHERE asset = ?", arguments: [Int64.max, rowID])
        }
        try await expectDamage(id, chunk: 0, naming: "recorded size \(Int64.max)", store: store, queue: queue)
    }

    @Test func negativeChunkRowSize() async throws {
        let (queue, store, id, rowID) = try makeAsset(TestBytes.text(count: 10_000))
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_asset_chunks SET size = -1 WHERE asset = ? AND chunk = 2", arguments: [rowID])
        }
        try await expectDamage(id, chunk: 2, naming: "recorded size -1", store: store, queue: queue)
    }

    @Test func intactAssetsStillRead() async throws {
        // The checks must not reject what StrataAssets writes: empty, one partial chunk, an
        // exact multiple of the chunk size, and a partial last chunk.
        for count in [0, 100, 3 * 4096, 10_000] {
            let data = TestBytes.text(count: count)
            let (queue, store, id, _) = try makeAsset(data)
            #expect(try await store.get(id) == data)
            #expect(try await queue.read { db in try db.assetData(id) } == data)
            var streamed = Data()
            for try await chunk in store.chunks(id) { streamed.append(chunk) }
            #expect(streamed == data)
        }
    }
}
