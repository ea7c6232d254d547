import Crypto
import Foundation
import StrataSQLite

extension Database {
    /// The asset with this identifier, or nil. Reads one row, not the content.
    public func assetDescriptor(_ id: AssetID) throws -> AssetDescriptor? {
        try AssetRow.fetch(self, id: id)?.descriptor
    }

    /// Whether an asset with this identifier is stored (false in a database that never stored
    /// one).
    public func assetExists(_ id: AssetID) throws -> Bool {
        guard try AssetSchema.exists(self) else { return false }
        return try AssetRow.fetch(self, id: id) != nil
    }

    /// The whole content of an asset, checked against every chunk's CRC-32 and the asset's
    /// SHA-256 before it is returned.
    ///
    /// This holds the whole asset in memory; use ``readAsset(_:_:)`` or
    /// ``AssetStore/open(_:)`` for large ones.
    ///
    /// - Throws: ``AssetError/notFound(_:)``, ``AssetError/corrupted(asset:chunk:reason:)``
    ///   naming the chunk that failed (or the metadata, when the asset's recorded sizes disagree
    ///   with each other or with its chunk rows), or ``AssetError/outOfMemory(asset:byteCount:)``
    ///   when a buffer for the whole content cannot be allocated.
    public func assetData(_ id: AssetID) throws -> Data {
        // Checked against its chunk rows, so the size allocated below is one the rows hold.
        let asset = try AssetRow.findReadable(self, id: id)
        let size = asset.descriptor.size
        guard let count = Int(exactly: size), var data = Data.fallibleUninitialized(count: count) else {
            throw AssetError.outOfMemory(asset: id, byteCount: size)
        }
        let decoder = ChunkDecoder()
        let hasher = ContentHasher(chunkCount: asset.descriptor.chunkCount)
        let actual = try data.withUnsafeMutableBytes { whole in
            do {
                for index in 0..<asset.descriptor.chunkCount {
                    let start = index * asset.descriptor.chunkSize
                    let slice = UnsafeMutableRawBufferPointer(rebasing: whole[start..<(start + asset.expectedSize(ofChunk: index))])
                    try decoder.decode(try StoredChunk.find(self, asset: asset, index: index), of: asset, into: slice)
                    hasher.update(unretained: UnsafeRawBufferPointer(slice))
                }
            } catch {
                // The hashing thread reads `whole`: wait for it before the buffer can go away.
                _ = hasher.finalize()
                throw error
            }
            return hasher.finalize()
        }
        try Self.verify(actual, of: asset)
        return data
    }

    /// Reads an asset chunk by chunk, in this connection's current transaction.
    ///
    /// `body` receives each chunk's bytes (valid only during the call) after they passed the
    /// chunk's CRC-32. The asset's SHA-256 is checked after the last chunk: a mismatch throws
    /// after `body` has seen every chunk, so treat what it received as valid only when this
    /// method returns.
    public func readAsset(_ id: AssetID, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let asset = try AssetRow.findReadable(self, id: id)
        let decoder = ChunkDecoder()
        let hasher = ContentHasher(chunkCount: asset.descriptor.chunkCount)
        for index in 0..<asset.descriptor.chunkCount {
            let chunk = try decoder.decode(try StoredChunk.find(self, asset: asset, index: index), of: asset)
            hasher.update(chunk)
            try chunk.withUnsafeBytes { try body($0) }
        }
        try Self.verify(hasher.finalize(), of: asset)
    }

    /// Writes an asset's content to a file (created or truncated), a chunk at a time.
    public func exportAsset(_ id: AssetID, to url: URL) throws {
        let file = try WritableFile(path: url.path)
        try readAsset(id) { try file.write($0) }
        try file.close()
    }

    static func verify(_ actual: AssetID, of asset: AssetRow) throws {
        guard actual == asset.descriptor.id else {
            throw AssetError.corrupted(asset: asset.descriptor.id, chunk: nil, reason: .hashMismatch(actual: actual))
        }
    }
}

/// A file opened for writing with POSIX calls.
final class WritableFile {
    private var descriptor: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw AssetError.fileError(path: path, errno: errno) }
    }

    deinit {
        if descriptor >= 0 { Foundation.close(descriptor) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard let base = bytes.baseAddress else { return }
        var written = 0
        while written < bytes.count {
            let count = Foundation.write(descriptor, base + written, bytes.count - written)
            if count < 0 {
                if errno == EINTR { continue }
                throw AssetError.fileError(path: path, errno: errno)
            }
            written += count
        }
    }

    func close() throws {
        let result = Foundation.close(descriptor)
        descriptor = -1
        if result != 0 { throw AssetError.fileError(path: path, errno: errno) }
    }
}
