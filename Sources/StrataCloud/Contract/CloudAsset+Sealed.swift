extension CloudAsset.Chunk {
    /// ``encoding`` of a chunk stored as is: its bytes are the content.
    public static let storedEncoding = 0
    /// ``encoding`` of a chunk stored as raw deflate.
    public static let deflateEncoding = 1
    /// ``encoding`` of a sealed chunk: ciphertext the cloud cannot read. Its ``size`` is its
    /// ``data``'s byte count, and its CRC-32 is checked like any other chunk's.
    public static let sealedEncoding = 2

    /// Whether the chunk is sealed (``sealedEncoding``).
    public var isSealed: Bool { encoding == Self.sealedEncoding }
}

extension CloudAsset {
    /// Whether the asset is sealed: it has chunks and every one is sealed. Its ``hash`` is then
    /// a keyed hash the cloud cannot verify (still 64 lowercase hexadecimal digits), so clouds
    /// skip their content check; an asset mixing sealed and unsealed chunks is refused
    /// (``CloudError/invalidAsset(_:reason:)``).
    public var isSealed: Bool { !chunks.isEmpty && chunks.allSatisfy(\.isSealed) }

    /// Why the asset's sealed chunks cannot be stored, or nil: an asset is sealed whole or not
    /// at all, and a sealed chunk holds exactly its size in bytes.
    var sealingDamage: String? {
        guard let sealed = chunks.firstIndex(where: \.isSealed) else { return nil }
        if let open = chunks.firstIndex(where: { !$0.isSealed }) {
            return "chunk \(max(sealed, open)) is \(sealed < open ? "not sealed" : "sealed"), unlike chunk \(min(sealed, open))"
        }
        for (index, chunk) in chunks.enumerated() where Int64(chunk.data.count) != chunk.size {
            return "sealed chunk \(index) holds \(chunk.data.count) bytes, not \(chunk.size)"
        }
        return nil
    }
}
