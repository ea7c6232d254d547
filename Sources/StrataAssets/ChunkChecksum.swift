import CZlib

/// The CRC-32 recorded with every chunk row.
///
/// It covers the chunk's index (8 bytes, little-endian) followed by the bytes stored in the row
/// (compressed or not). Checking the stored bytes rather than the inflated ones catches a damaged
/// row before zlib sees it, and costs a pass over fewer bytes; seeding with the index also makes
/// two intact chunks swapped between rows fail their check. zlib's `crc32` is the
/// implementation: it is table-driven and fast, and already linked.
enum ChunkChecksum {
    static func compute(index: Int, stored: UnsafeRawBufferPointer) -> UInt32 {
        var littleEndianIndex = UInt64(index).littleEndian
        var crc = withUnsafeBytes(of: &littleEndianIndex) { bytes in
            crc32(0, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
        }
        // crc32 with a null buffer returns the initial value and drops `crc`: skip empty input.
        var remaining = stored
        while let base = remaining.baseAddress, !remaining.isEmpty {
            // crc32 takes a 32-bit length; chunks are far smaller, but stay correct regardless.
            let count = min(remaining.count, Int(UInt32.max >> 1))
            crc = crc32(crc, base.assumingMemoryBound(to: Bytef.self), uInt(count))
            remaining = UnsafeRawBufferPointer(rebasing: remaining[count...])
        }
        return UInt32(truncatingIfNeeded: crc)
    }
}
