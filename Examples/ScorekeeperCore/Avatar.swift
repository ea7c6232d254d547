import Foundation

/// Generated avatar images: small, deterministic, dependency-free.
public enum Avatar {
    /// An 8×8 identicon as a 24-bit Windows bitmap (BMP, 246 bytes): a left-right mirrored
    /// pattern and a colour, both derived from `seed`. BMP needs no compression or checksums,
    /// so the bytes are easy to build here and open in any image viewer.
    public static func identicon(seed: String, size: Int = 8) -> Data {
        var hash = FNV1a(seed)
        let colour: (UInt8, UInt8, UInt8) = (hash.nextByte() | 0x40, hash.nextByte() | 0x40, hash.nextByte() | 0x40)
        let background: (UInt8, UInt8, UInt8) = (0xF0, 0xF0, 0xF0)
        let rowBytes = size * 3
        let padding = (4 - rowBytes % 4) % 4
        let pixelBytes = (rowBytes + padding) * size
        var data = Data()
        data.reserveCapacity(54 + pixelBytes)
        // BITMAPFILEHEADER
        data.append(contentsOf: [0x42, 0x4D])
        data.appendLittleEndian(UInt32(54 + pixelBytes))
        data.appendLittleEndian(UInt32(0))
        data.appendLittleEndian(UInt32(54))
        // BITMAPINFOHEADER
        data.appendLittleEndian(UInt32(40))
        data.appendLittleEndian(Int32(size))
        data.appendLittleEndian(Int32(size))
        data.appendLittleEndian(UInt16(1))
        data.appendLittleEndian(UInt16(24))
        data.appendLittleEndian(UInt32(0))
        data.appendLittleEndian(UInt32(pixelBytes))
        data.appendLittleEndian(Int32(2835))
        data.appendLittleEndian(Int32(2835))
        data.appendLittleEndian(UInt32(0))
        data.appendLittleEndian(UInt32(0))
        // Pixels, bottom row first, blue-green-red; the left half decides, the right mirrors it.
        var pattern: [[Bool]] = []
        for _ in 0..<size {
            var half: [Bool] = []
            for _ in 0..<(size + 1) / 2 { half.append(hash.nextByte() & 1 == 1) }
            pattern.append(half + half.reversed().suffix(size / 2))
        }
        for row in pattern.reversed() {
            for isSet in row {
                let (red, green, blue) = isSet ? colour : background
                data.append(contentsOf: [blue, green, red])
            }
            data.append(contentsOf: [UInt8](repeating: 0, count: padding))
        }
        return data
    }
}

/// FNV-1a: a tiny hash that, unlike `Hasher`, gives the same bytes in every process.
private struct FNV1a {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    init(_ text: String) {
        for byte in text.utf8 { mix(byte) }
    }

    private mutating func mix(_ byte: UInt8) {
        state = (state ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
    }

    mutating func nextByte() -> UInt8 {
        mix(0x5A)
        return UInt8(truncatingIfNeeded: state >> 29)
    }
}

extension Data {
    fileprivate mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
