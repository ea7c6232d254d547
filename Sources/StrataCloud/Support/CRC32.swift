import Foundation

/// CRC-32 (IEEE 802.3, zlib's), as StrataAssets records it per chunk: ``CloudAsset`` checks
/// chunks with it (MockCloud's uploads), and the engine signs the chunks of large BLOB values it
/// sends as assets through ``CloudAsset/checksum(ofChunk:data:)``, all without linking zlib.
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func checksum(_ data: Data) -> UInt32 {
        update(0, with: data)
    }

    /// The checksum StrataAssets records with a chunk: over the chunk's index (8 bytes,
    /// little-endian) followed by its stored bytes, so swapped chunks fail too.
    static func checksum(index: Int, data: Data) -> UInt32 {
        let indexBytes = withUnsafeBytes(of: UInt64(index).littleEndian) { Data($0) }
        return update(update(0, with: indexBytes), with: data)
    }

    /// Continues a CRC-32 over more bytes (zlib's `crc32(crc, bytes)`).
    static func update(_ crc: UInt32, with data: Data) -> UInt32 {
        var value = crc ^ 0xFFFF_FFFF
        for byte in data { value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8) }
        return value ^ 0xFFFF_FFFF
    }
}
