import Foundation
import StrataAssets
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct CorruptionTests {
    /// Stores three chunks and returns the asset's id and integer row id.
    func storeThreeChunks(_ data: Data, queue: DatabaseQueue, store: AssetStore) throws -> (AssetID, Int64) {
        let id = try store.put(data).id
        let rowID = try queue.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM strata_assets WHERE sha256 = ?", arguments: [id]) }
        return (id, try #require(rowID))
    }

    func flipByte(in chunk: Int, asset rowID: Int64, at offset: Int = 10, queue: DatabaseQueue) throws {
        try queue.write { db in
            var bytes = try #require(
                try Data.fetchOne(
                    db, sql: "SELECT data FROM strata_asset_chunks WHERE asset = ? AND chunk = ?", arguments: [rowID, chunk]))
            bytes[offset] ^= 0x01
            try db.execute(sql: "UPDATE strata_asset_chunks SET data = ? WHERE asset = ? AND chunk = ?", arguments: [bytes, rowID, chunk])
        }
    }

    func expectCorrupted(
        _ id: AssetID, chunk: Int?, store: AssetStore, queue: DatabaseQueue, where check: (AssetCorruption) -> Bool
    ) async throws {
        func matches(_ error: any Error) -> Bool {
            guard case AssetError.corrupted(let asset, let failedChunk, let reason) = error else { return false }
            return asset == id && failedChunk == chunk && check(reason)
        }
        #expect(performing: { try store.get(id) }, throws: matches)
        #expect(performing: { try queue.read { db in try db.readAsset(id) { _ in } } }, throws: matches)
        #expect(
            performing: {
                let reader = try store.open(id)
                while try reader.next() != nil {}
            }, throws: matches)
        await #expect(performing: { for try await _ in store.chunks(id) {} }, throws: matches)
    }

    @Test func flippedByteInCompressedChunk() async throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let (id, rowID) = try storeThreeChunks(TestBytes.text(count: 10_000), queue: queue, store: store)
        try flipByte(in: 1, asset: rowID, queue: queue)
        try await expectCorrupted(id, chunk: 1, store: store, queue: queue) {
            if case .checksumMismatch = $0 { true } else { false }
        }
        // The reader delivered chunk 0 (intact) and stops at chunk 1 without yielding it.
        let reader = try store.open(id)
        #expect(try reader.next()?.count == 4096)
        #expect(throws: AssetError.self) { try reader.next() }
        #expect(reader.bytesRead == 4096)
    }

    @Test func flippedByteInStoredChunk() async throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let (id, rowID) = try storeThreeChunks(TestBytes.random(count: 10_000), queue: queue, store: store)
        try flipByte(in: 2, asset: rowID, at: 0, queue: queue)
        try await expectCorrupted(id, chunk: 2, store: store, queue: queue) {
            if case .checksumMismatch = $0 { true } else { false }
        }
    }

    @Test func swappedChunksFailTheirChecksums() async throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let (id, rowID) = try storeThreeChunks(TestBytes.random(count: 3 * 4096), queue: queue, store: store)
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_asset_chunks SET chunk = chunk + 10 WHERE asset = ?", arguments: [rowID])
            try db.execute(
                sql: "UPDATE strata_asset_chunks SET chunk = CASE chunk WHEN 10 THEN 1 WHEN 11 THEN 0 ELSE 2 END WHERE asset = ?",
                arguments: [rowID])
        }
        try await expectCorrupted(id, chunk: 0, store: store, queue: queue) {
            if case .checksumMismatch = $0 { true } else { false }
        }
    }

    @Test func damagedDeflateStreamWithMatchingChecksum() async throws {
        // Someone rewrote the row and its checksum: zlib must reject it, not return garbage.
        let (queue, store) = try makeStore(chunkSize: 4096)
        let (id, rowID) = try storeThreeChunks(TestBytes.text(count: 10_000), queue: queue, store: store)
        let garbage = Data(repeating: 0xFF, count: 100)
        var index = UInt64(1).littleEndian
        let crc = Int64(Self.crc32(Data(bytes: &index, count: 8) + garbage))
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE strata_asset_chunks SET data = ?, crc32 = ? WHERE asset = ? AND chunk = 1", arguments: [garbage, crc, rowID])
        }
        try await expectCorrupted(id, chunk: 1, store: store, queue: queue) { $0 == .invalidCompressedData }
    }

    @Test func contentHashIsVerified() async throws {
        // A stored chunk rewritten with a valid checksum passes the chunk check: the SHA-256 catches it.
        let (queue, store) = try makeStore(chunkSize: 4096)
        let data = TestBytes.random(count: 10_000)
        let (id, rowID) = try storeThreeChunks(data, queue: queue, store: store)
        var alteredBytes = data.subdata(in: 4096..<8192)
        alteredBytes[0] ^= 0xFF
        let altered = alteredBytes
        var index = UInt64(1).littleEndian
        let crc = Int64(Self.crc32(Data(bytes: &index, count: 8) + altered))
        try await queue.write { db in
            try db.execute(
                sql: "UPDATE strata_asset_chunks SET data = ?, crc32 = ? WHERE asset = ? AND chunk = 1", arguments: [altered, crc, rowID])
        }
        try await expectCorrupted(id, chunk: nil, store: store, queue: queue) {
            if case .hashMismatch = $0 { true } else { false }
        }
    }

    @Test func missingChunkRow() async throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let (id, rowID) = try storeThreeChunks(TestBytes.text(count: 10_000), queue: queue, store: store)
        try await queue.write { db in
            try db.execute(sql: "DELETE FROM strata_asset_chunks WHERE asset = ? AND chunk = 2", arguments: [rowID])
        }
        try await expectCorrupted(id, chunk: 2, store: store, queue: queue) {
            if case .invalidChunk = $0 { true } else { false }
        }
    }

    @Test func wrongRecordedSize() async throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let (id, rowID) = try storeThreeChunks(TestBytes.text(count: 10_000), queue: queue, store: store)
        try await queue.write { db in
            try db.execute(sql: "UPDATE strata_asset_chunks SET size = 5 WHERE asset = ? AND chunk = 0", arguments: [rowID])
        }
        try await expectCorrupted(id, chunk: 0, store: store, queue: queue) {
            if case .invalidChunk = $0 { true } else { false }
        }
    }

    @Test func inconsistentMetadata() async throws {
        let (queue, store) = try makeStore(chunkSize: 4096)
        let (id, rowID) = try storeThreeChunks(TestBytes.text(count: 10_000), queue: queue, store: store)
        try await queue.write { db in try db.execute(sql: "UPDATE strata_assets SET chunkCount = 99 WHERE id = ?", arguments: [rowID]) }
        try await expectCorrupted(id, chunk: nil, store: store, queue: queue) {
            if case .invalidMetadata = $0 { true } else { false }
        }
    }

    /// CRC-32 (IEEE), bit by bit: an independent implementation to forge rows with.
    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 {
                crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
            }
        }
        return ~crc
    }
}
