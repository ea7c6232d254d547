import Crypto
import Foundation
import StrataSQLite

/// Reads an asset one chunk at a time, each chunk in its own short read of the database, so a
/// reader holds no transaction (and blocks no checkpoint) between chunks, and memory stays at
/// one chunk whatever the asset's size.
///
/// Every chunk is checked against its CRC-32 before it is returned; after the last chunk, the
/// content's SHA-256 is checked, and ``next()`` throws instead of returning nil if it differs.
/// Consider the bytes valid only once `next()` has returned nil.
///
/// Assets never change once stored (their identifier is their content), so reading chunks from
/// successive snapshots is consistent. If the asset is deleted while being read, `next()` throws
/// ``AssetError/notFound(_:)``.
///
/// ```swift
/// let reader = try store.open(id)
/// while let chunk = try reader.next() { try output.write(contentsOf: chunk) }
/// ```
public final class AssetReader {
    /// The asset being read.
    public let descriptor: AssetDescriptor
    private let database: any DatabaseReader
    private let asset: AssetRow
    private let decoder = ChunkDecoder()
    private let hasher: ContentHasher
    private var nextIndex = 0
    private var verified = false
    /// The number of bytes returned so far.
    public private(set) var bytesRead: Int64 = 0

    init(database: any DatabaseReader, asset: AssetRow) {
        self.database = database
        self.asset = asset
        descriptor = asset.descriptor
        hasher = ContentHasher(chunkCount: asset.descriptor.chunkCount)
    }

    /// The next chunk, or nil once the whole content has been returned and verified.
    public func next() throws -> Data? {
        guard nextIndex < asset.descriptor.chunkCount else {
            if !verified {
                try Database.verify(hasher.finalize(), of: asset)
                verified = true
            }
            return nil
        }
        let index = nextIndex
        let asset = self.asset
        let stored = try database.read { db in try StoredChunk.find(db, asset: asset, index: index) }
        let chunk = try decoder.decode(stored, of: asset)
        hasher.update(chunk)
        nextIndex += 1
        bytesRead += Int64(chunk.count)
        return chunk
    }

    /// Reads the rest of the asset and writes it to a file handle.
    public func write(to handle: FileHandle) throws {
        while let chunk = try next() {
            try handle.write(contentsOf: chunk)
        }
    }
}

/// An asset's content as an asynchronous sequence of chunks, with the checks of
/// ``AssetReader``: each chunk is verified before it is delivered, and iteration throws rather
/// than ends if the content's SHA-256 differs.
///
/// ```swift
/// for try await chunk in store.chunks(id) { upload(chunk) }
/// ```
public struct AssetChunks: AsyncSequence, Sendable {
    public typealias Element = Data
    let database: any DatabaseReader
    let id: AssetID

    public func makeAsyncIterator() -> Iterator {
        Iterator(database: database, id: id)
    }

    public struct Iterator: AsyncIteratorProtocol {
        let database: any DatabaseReader
        let id: AssetID
        private var asset: AssetRow?
        private var decoder: ChunkDecoder?
        private var hasher: ContentHasher?
        private var nextIndex = 0
        private var finished = false

        init(database: any DatabaseReader, id: AssetID) {
            self.database = database
            self.id = id
        }

        public mutating func next() async throws -> Data? {
            guard !finished else { return nil }
            let asset: AssetRow
            if let known = self.asset {
                asset = known
            } else {
                let id = self.id
                asset = try await database.read { db in try AssetRow.findReadable(db, id: id) }
                self.asset = asset
                hasher = ContentHasher(chunkCount: asset.descriptor.chunkCount)
            }
            guard nextIndex < asset.descriptor.chunkCount else {
                finished = true
                if let hasher { try Database.verify(hasher.finalize(), of: asset) }
                return nil
            }
            let index = nextIndex
            let stored = try await database.read { db in try StoredChunk.find(db, asset: asset, index: index) }
            let decoder = self.decoder ?? ChunkDecoder()
            self.decoder = decoder
            let chunk = try decoder.decode(stored, of: asset)
            hasher?.update(chunk)
            nextIndex += 1
            return chunk
        }
    }
}
