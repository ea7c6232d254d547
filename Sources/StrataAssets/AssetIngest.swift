import Crypto
import Foundation
import StrataSQLite

/// Writes one asset's chunks as its bytes arrive, in whatever pieces they come.
///
/// Memory is one chunk of input plus one chunk of compressed output, whatever the asset's size:
/// bytes are buffered only up to a chunk, encoded, inserted, and the buffer reused.
///
/// Content addressing needs the hash before it can know whether the content is already stored,
/// but a stream's hash is only known at its end. So when the caller cannot supply the hash up
/// front, the chunks are written under a provisional asset row (`sha256 = 'pending:…'`) while
/// the SHA-256 is computed incrementally; ``finish(expecting:)`` then either gives the row its
/// real hash, or, if that content was already stored, deletes the provisional row (and its
/// chunks) and returns the existing asset. It all runs in the caller's transaction, so no other
/// connection ever sees a pending row. When the bytes are in memory, the hash is computed first
/// and a duplicate costs no write at all (see `Database.putAsset(_:owner:)`).
final class AssetIngest {
    private let db: Database
    private let options: AssetStorageOptions
    private let rowID: Int64
    private var hasher = SHA256()
    private let buffer: UnsafeMutableRawBufferPointer
    private var filled = 0
    private var chunkIndex = 0
    private var size: Int64 = 0
    private var storedSize: Int64 = 0
    private var deflater: ZlibDeflater?
    private var compression: (AssetCompression, String)?
    private var finished = false

    /// Inserts the provisional asset row. Must run inside a write transaction.
    init(db: Database, options: AssetStorageOptions) throws {
        self.db = db
        self.options = options.validated
        try db.execute(
            sql: """
                INSERT INTO strata_assets (sha256, size, storedSize, chunkSize, chunkCount, compression, compressionReason, referenceCount, createdAt)
                VALUES (?, 0, 0, ?, 0, 'none', 'pending', 0, ?)
                """,
            arguments: ["pending:" + UUID().uuidString, self.options.chunkSize, Date().timeIntervalSince1970])
        rowID = db.lastInsertedRowID
        buffer = .allocate(byteCount: self.options.chunkSize, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    /// Appends bytes to the asset.
    func write(_ bytes: UnsafeRawBufferPointer) throws {
        precondition(!finished, "write after finish")
        var remaining = bytes
        let chunkSize = options.chunkSize
        while !remaining.isEmpty {
            // Whole chunks straight from the caller's buffer: no copy into ours.
            if filled == 0 && remaining.count >= chunkSize {
                try storeChunk(UnsafeRawBufferPointer(rebasing: remaining[0..<chunkSize]))
                remaining = UnsafeRawBufferPointer(rebasing: remaining[chunkSize...])
                continue
            }
            let count = min(chunkSize - filled, remaining.count)
            if let source = remaining.baseAddress, let destination = buffer.baseAddress {
                (destination + filled).copyMemory(from: source, byteCount: count)
            }
            filled += count
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
            if filled == chunkSize {
                try storeChunk(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
                filled = 0
            }
        }
    }

    /// Stores the last partial chunk and gives the asset its identity.
    ///
    /// - Parameter expected: when given, the content must hash to it, or
    ///   ``AssetError/unexpectedContent(expected:actual:)`` is thrown (the caller's savepoint
    ///   then discards the chunks).
    func finish(expecting expected: AssetID?) throws -> AssetRow {
        precondition(!finished, "finish called twice")
        finished = true
        if filled > 0 {
            try storeChunk(UnsafeRawBufferPointer(rebasing: buffer[0..<filled]))
            filled = 0
        }
        let id = AssetID(digest: hasher.finalize())
        if let expected, expected != id {
            throw AssetError.unexpectedContent(expected: expected, actual: id)
        }
        if let existing = try AssetRow.fetch(db, id: id) {
            // Deleting the provisional row deletes its chunks (trigger strata_assets_delete).
            try db.execute(sql: "DELETE FROM strata_assets WHERE id = ?", arguments: [rowID])
            return existing
        }
        let (compression, reason) = compression ?? (.none, size == 0 ? "empty" : "pending")
        try db.execute(
            sql: """
                UPDATE strata_assets
                SET sha256 = ?, size = ?, storedSize = ?, chunkCount = ?, compression = ?, compressionReason = ?
                WHERE id = ?
                """,
            arguments: [id, size, storedSize, chunkIndex, compression.rawValue, reason, rowID])
        return AssetRow(
            rowID: rowID,
            descriptor: AssetDescriptor(
                id: id, size: size, storedSize: storedSize, chunkCount: chunkIndex, chunkSize: options.chunkSize,
                compression: compression, compressionReason: reason, referenceCount: 0))
    }

    // MARK: - Chunks

    private func storeChunk(_ chunk: UnsafeRawBufferPointer) throws {
        hasher.update(bufferPointer: chunk)
        size += Int64(chunk.count)
        if compression == nil {
            try decideCompression(sample: chunk)
        } else if compression?.0 == .deflate, let deflater {
            try deflater.deflate(chunk) { compressed in
                // Compression was chosen for the asset, but a chunk that did not shrink is
                // cheaper to store and read as is.
                if compressed.count < chunk.count {
                    try insertChunk(compressed, size: chunk.count, encoding: .deflate)
                } else {
                    try insertChunk(chunk, size: chunk.count, encoding: .stored)
                }
            }
        } else {
            try insertChunk(chunk, size: chunk.count, encoding: .stored)
        }
    }

    /// Decides from the first chunk, and stores it.
    private func decideCompression(sample: UnsafeRawBufferPointer) throws {
        if options.compressionLevel == 0 {
            compression = (.none, "disabled")
        } else if let format = CompressionPolicy.compressedFormat(of: sample) {
            compression = (.none, "format:\(format)")
        }
        if compression != nil {
            try insertChunk(sample, size: sample.count, encoding: .stored)
            return
        }
        let deflater = try ZlibDeflater(level: Int32(options.compressionLevel), capacity: options.chunkSize)
        try deflater.deflate(sample) { compressed in
            let reason = CompressionPolicy.sampleReason(original: sample.count, compressed: compressed.count)
            if CompressionPolicy.pays(original: sample.count, compressed: compressed.count, minimumSavings: options.minimumSavings) {
                compression = (.deflate, reason)
                self.deflater = deflater
                try insertChunk(compressed, size: sample.count, encoding: .deflate)
            } else {
                compression = (.none, reason)
                try insertChunk(sample, size: sample.count, encoding: .stored)
            }
        }
    }

    private func insertChunk(_ stored: UnsafeRawBufferPointer, size: Int, encoding: ChunkEncoding) throws {
        let crc = ChunkChecksum.compute(index: chunkIndex, stored: stored)
        // No copy into a Data of our own: SQLite copies the bytes when binding.
        let data =
            stored.baseAddress.map {
                Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: $0), count: stored.count, deallocator: .none)
            } ?? Data()
        try db.execute(
            sql: "INSERT INTO strata_asset_chunks (asset, chunk, size, encoding, crc32, data) VALUES (?, ?, ?, ?, ?, ?)",
            arguments: [rowID, chunkIndex, size, encoding.rawValue, Int64(crc), data])
        storedSize += Int64(stored.count)
        chunkIndex += 1
    }
}

/// How a chunk's bytes are stored in its row.
enum ChunkEncoding: Int, Sendable {
    /// The uncompressed bytes.
    case stored = 0
    /// One complete raw-deflate stream (RFC 1951, no zlib header).
    case deflate = 1
}
