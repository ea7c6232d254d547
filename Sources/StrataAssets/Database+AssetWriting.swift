import Crypto
import Foundation
import StrataSQLite

/// Receives the bytes of an asset being put with `Database.putAsset(owner:options:expecting:writing:)`.
///
/// Write in pieces of any size: they are gathered into chunks, so memory stays at about two
/// chunks however much you write.
public struct AssetWriter: ~Copyable {
    let ingest: AssetIngest

    /// Appends bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        try ingest.write(bytes)
    }

    /// Appends bytes.
    public func write(_ data: Data) throws {
        try data.withUnsafeBytes { try ingest.write($0) }
    }

    /// Appends bytes.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try ingest.write($0) }
    }
}

extension Database {
    /// Stores bytes as an asset, or finds the asset that already holds them, and returns it.
    ///
    /// The hash is computed first, so storing content that is already present writes nothing
    /// but the optional reference. Run it inside `write { db in }` with the insert of the
    /// record that refers to the asset, so both commit or neither does. Outside a transaction it
    /// opens one; inside, it runs in a savepoint, so a failure leaves your transaction as it was.
    ///
    /// - Parameters:
    ///   - owner: when given, the owner is made to refer to the asset (replacing what it
    ///     referred to before). An asset nobody refers to stays until
    ///     ``deleteUnreferencedAssets()``.
    ///   - options: chunk size and compression for a newly stored asset.
    @discardableResult
    public func putAsset(
        _ data: Data, owner: AssetOwner? = nil, options: AssetStorageOptions = AssetStorageOptions()
    ) throws -> AssetDescriptor {
        try withAssetSavepoint {
            let id = AssetID(of: data)
            let row: AssetRow
            if let existing = try AssetRow.fetch(self, id: id) {
                row = existing
            } else {
                let ingest = try AssetIngest(db: self, options: options)
                try data.withUnsafeBytes { try ingest.write($0) }
                row = try ingest.finish(expecting: id)
            }
            return try finishPut(row, owner: owner)
        }
    }

    /// Stores the contents of a file as an asset, reading it a chunk at a time.
    ///
    /// Memory stays at about two chunks whatever the file's size. The file is read once: its
    /// hash is computed while its chunks are written, and if the content turns out to be stored
    /// already, the new chunks are discarded before the transaction ends.
    @discardableResult
    public func putAsset(
        contentsOf url: URL, owner: AssetOwner? = nil, options: AssetStorageOptions = AssetStorageOptions()
    ) throws -> AssetDescriptor {
        let file = try ReadableFile(path: url.path)
        let validated = options.validated
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: validated.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        return try putAsset(owner: owner, options: validated) { writer in
            while true {
                let count = try file.read(into: buffer)
                if count == 0 { break }
                try writer.write(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
        }
    }

    /// Stores bytes produced by `body` as an asset: a stream, a download, a generator.
    ///
    /// ```swift
    /// try db.putAsset(owner: owner) { writer in
    ///     while let piece = try source.next() { try writer.write(piece) }
    /// }
    /// ```
    ///
    /// - Parameter expected: when given (for example the identifier a synced record names),
    ///   the bytes must hash to it, or ``AssetError/unexpectedContent(expected:actual:)`` is
    ///   thrown and nothing is stored.
    @discardableResult
    public func putAsset(
        owner: AssetOwner? = nil,
        options: AssetStorageOptions = AssetStorageOptions(),
        expecting expected: AssetID? = nil,
        writing body: (borrowing AssetWriter) throws -> Void
    ) throws -> AssetDescriptor {
        try withAssetSavepoint {
            let ingest = try AssetIngest(db: self, options: options)
            let writer = AssetWriter(ingest: ingest)
            try body(writer)
            return try finishPut(try ingest.finish(expecting: expected), owner: owner)
        }
    }

    private func finishPut(_ row: AssetRow, owner: AssetOwner?) throws -> AssetDescriptor {
        guard let owner else { return row.descriptor }
        try setAssetReference(row.descriptor.id, owner: owner)
        return try AssetRow.find(self, id: row.descriptor.id).descriptor
    }

    /// Runs `body` in a savepoint (a transaction outside one), returning its result.
    func withAssetSavepoint<T>(_ body: () throws -> T) throws -> T {
        try savepoint(body)
    }
}

/// A file opened for reading with POSIX calls, closed when released.
final class ReadableFile {
    private let descriptor: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw AssetError.fileError(path: path, errno: errno) }
    }

    deinit {
        close(descriptor)
    }

    /// Fills as much of `buffer` as the file allows; returns 0 at the end of the file.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var total = 0
        while total < buffer.count {
            let count = Foundation.read(descriptor, base + total, buffer.count - total)
            if count < 0 {
                if errno == EINTR { continue }
                throw AssetError.fileError(path: path, errno: errno)
            }
            if count == 0 { break }
            total += count
        }
        return total
    }
}
