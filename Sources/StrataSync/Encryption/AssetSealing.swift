import Crypto
import Foundation
import StrataCloud

/// Seals an asset's stored chunks for the cloud, and opens them again.
///
/// The cloud sees neither the content nor its SHA-256: it sees the asset under a keyed name,
/// HMAC-SHA256 of the content's hash under the zone key, so the same content under the same key
/// has one name and is stored once (dedupe within a key), and nobody without the key can test
/// whether a zone holds a known file. Each chunk is sealed with ChaCha20-Poly1305 under a key
/// derived (HKDF) from the zone key and the content hash, with the chunk's index as nonce:
/// deterministic, so a re-upload of the same content gives the same bytes, and safe because
/// that derived key seals exactly one content. The chunk's index, the chunk count and the
/// asset's name are authenticated (each chunk's own sizes are inside its ciphertext), so chunks cannot be swapped, dropped or moved to another
/// asset. The compressed chunk is what is sealed: compression still saves storage and transfer.
enum AssetSealing {
    /// The chunk encoding the cloud stores sealed chunks under (opaque to it).
    static let sealedEncoding = CloudAsset.Chunk.sealedEncoding
    /// The encoding inside the one sealed chunk of empty content.
    static let emptyMarker = 255

    /// The name the cloud knows content `hash` by under `key`.
    static func name(ofContent hash: String, with key: ZoneKey) -> String {
        let code = HMAC<SHA256>.authenticationCode(for: Data("strata.asset-name.1:\(hash)".utf8), using: key.key)
        return code.map { String(format: "%02x", $0) }.joined()
    }

    /// `asset` (named by its content's SHA-256) sealed under `key`.
    static func seal(_ asset: CloudAsset, with key: ZoneKey) throws -> CloudAsset {
        let name = name(ofContent: asset.hash, with: key)
        let contentKey = contentKey(for: asset.hash, with: key)
        var chunks: [CloudAsset.Chunk] = []
        chunks.reserveCapacity(asset.chunks.count)
        // Empty content has no chunks, but a sealed asset needs one for the cloud to know it
        // for sealed (and not check it against a SHA-256): a marker chunk stands in.
        let plainChunks =
            asset.chunks.isEmpty ? [CloudAsset.Chunk(data: Data(), encoding: Self.emptyMarker, size: 0, crc32: 0)] : asset.chunks
        for (index, chunk) in plainChunks.enumerated() {
            var plaintext = Data(capacity: chunk.data.count + 9)
            plaintext.append(UInt8(truncatingIfNeeded: chunk.encoding))
            withUnsafeBytes(of: chunk.size.bigEndian) { plaintext.append(contentsOf: $0) }
            plaintext.append(chunk.data)
            let box = try ChaChaPoly.seal(
                plaintext, using: contentKey, nonce: try nonce(index),
                authenticating: chunkData(name: name, index: index, count: plainChunks.count))
            let sealed = box.combined
            chunks.append(
                CloudAsset.Chunk(
                    data: sealed, encoding: sealedEncoding, size: Int64(sealed.count),
                    crc32: CloudAsset.checksum(ofChunk: index, data: sealed)))
        }
        let storedSize = chunks.reduce(Int64(0)) { $0 + $1.size }
        return CloudAsset(hash: name, size: storedSize, chunkSize: asset.chunkSize, chunks: chunks)
    }

    /// The asset `sealed` holds, named again by `hash` (the content's SHA-256). The caller's
    /// asset store checks the content against `hash` again.
    ///
    /// - Throws: ``EncryptionError/tamperedAsset(_:)`` when a chunk fails authentication.
    static func open(_ sealed: CloudAsset, hash: String, with key: ZoneKey) throws -> CloudAsset {
        // A sealed asset has at least one chunk (empty content seals a marker): none at all
        // means every chunk was dropped.
        guard !sealed.chunks.isEmpty else { throw EncryptionError.tamperedAsset(hash) }
        let contentKey = contentKey(for: hash, with: key)
        var chunks: [CloudAsset.Chunk] = []
        chunks.reserveCapacity(sealed.chunks.count)
        for (index, chunk) in sealed.chunks.enumerated() {
            guard chunk.encoding == sealedEncoding else { throw EncryptionError.tamperedAsset(hash) }
            let plaintext: Data
            do {
                let box = try ChaChaPoly.SealedBox(combined: chunk.data)
                plaintext = try ChaChaPoly.open(
                    box, using: contentKey,
                    authenticating: chunkData(name: sealed.hash, index: index, count: sealed.chunks.count))
            } catch {
                throw EncryptionError.tamperedAsset(hash)
            }
            guard plaintext.count >= 9 else { throw EncryptionError.tamperedAsset(hash) }
            let start = plaintext.startIndex
            let encoding = Int(plaintext[start])
            let chunkSize = plaintext[(start + 1)..<(start + 9)].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            let data = Data(plaintext[(start + 9)...])
            if encoding == Self.emptyMarker && sealed.chunks.count == 1 && data.isEmpty { break }
            chunks.append(
                CloudAsset.Chunk(data: data, encoding: encoding, size: chunkSize, crc32: CloudAsset.checksum(ofChunk: index, data: data)))
        }
        return CloudAsset(hash: hash, size: chunks.reduce(Int64(0)) { $0 + $1.size }, chunkSize: sealed.chunkSize, chunks: chunks)
    }

    private static func contentKey(for hash: String, with key: ZoneKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: key.key, salt: Data(hash.utf8), info: Data("strata.asset-content.1".utf8), outputByteCount: 32)
    }

    private static func nonce(_ index: Int) throws -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: UInt64(index).bigEndian) { bytes.replaceSubrange(4..<12, with: $0) }
        return try ChaChaPoly.Nonce(data: bytes)
    }

    private static func chunkData(name: String, index: Int, count: Int) -> Data {
        Data("strata.asset.1\u{0}\(name)\u{0}\(index)\u{0}\(count)".utf8)
    }
}
