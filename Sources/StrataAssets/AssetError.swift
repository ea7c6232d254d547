/// Errors of the assets module. Each names the asset it concerns, and corruption names the chunk.
public enum AssetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No asset has this identifier (it never existed, or its last reference was released).
    case notFound(AssetID)
    /// Stored data failed a check: the bytes are not returned. `chunk` is the 0-based index of
    /// the damaged chunk, or nil when the damage is only visible on the whole asset (its
    /// SHA-256 or its metadata).
    case corrupted(asset: AssetID, chunk: Int?, reason: AssetCorruption)
    /// ``AssetStore/delete(_:)`` was asked to delete an asset that owners still refer to.
    case stillReferenced(AssetID, referenceCount: Int)
    /// A put that was told which content to expect received other bytes.
    case unexpectedContent(expected: AssetID, actual: AssetID)
    /// Text that is not a 64-character hexadecimal SHA-256.
    case invalidIdentifier(String)
    /// zlib refused to set up or run a stream (not a data error: those are ``corrupted(asset:chunk:reason:)``).
    case compressionFailed(code: Int32, message: String)
    /// A file could not be read or written.
    case fileError(path: String, errno: Int32)
    /// The store's tables are missing or from a newer version of the module.
    case schemaMismatch(String)
    /// A buffer for the whole content (`Database.assetData(_:)`,
    /// `AssetStore.get(_:)`) could not be allocated: read the asset a chunk at a time instead.
    case outOfMemory(asset: AssetID, byteCount: Int64)

    public var description: String {
        switch self {
        case .notFound(let id):
            "asset \(id) not found"
        case .corrupted(let id, let chunk, let reason):
            "asset \(id) is corrupted" + (chunk.map { " in chunk \($0)" } ?? "") + ": \(reason)"
        case .stillReferenced(let id, let count):
            "asset \(id) is still referenced by \(count) owner(s)"
        case .unexpectedContent(let expected, let actual):
            "expected content \(expected), received \(actual)"
        case .invalidIdentifier(let text):
            "not an asset identifier: \(text)"
        case .compressionFailed(let code, let message):
            "zlib error \(code): \(message)"
        case .fileError(let path, let errno):
            "file error \(errno) for \(path)"
        case .schemaMismatch(let message):
            "asset tables: \(message)"
        case .outOfMemory(let id, let byteCount):
            "cannot allocate \(byteCount) bytes for asset \(id)"
        }
    }
}

/// What check a corrupted asset failed.
public enum AssetCorruption: Sendable, Equatable, CustomStringConvertible {
    /// The chunk's stored bytes do not match the CRC-32 recorded with them.
    case checksumMismatch(expected: UInt32, actual: UInt32)
    /// The chunk passed its checksum but zlib rejected it, or it inflated to the wrong length.
    case invalidCompressedData
    /// The chunk row is missing, or its recorded size or encoding is impossible.
    case invalidChunk(String)
    /// Every chunk passed, but the whole content's SHA-256 differs from the asset's identifier.
    case hashMismatch(actual: AssetID)
    /// The asset row itself is inconsistent (its sizes and chunk count disagree).
    case invalidMetadata(String)

    public var description: String {
        switch self {
        case .checksumMismatch(let expected, let actual):
            "CRC-32 mismatch (recorded \(String(expected, radix: 16)), computed \(String(actual, radix: 16)))"
        case .invalidCompressedData:
            "invalid compressed data"
        case .invalidChunk(let detail):
            "invalid chunk: \(detail)"
        case .hashMismatch(let actual):
            "SHA-256 mismatch (content hashes to \(actual))"
        case .invalidMetadata(let detail):
            "invalid metadata: \(detail)"
        }
    }
}
