/// Decides once per asset whether its chunks are deflated.
///
/// Two checks, cheapest first:
/// 1. The first bytes name a format that is already compressed (JPEG, PNG, GIF, WebP, HEIC and
///    MP4, zip and the formats built on it, gzip, zstd, xz, bzip2, 7z, …): deflate would spend
///    time to gain nothing, so it is not even tried.
/// 2. Otherwise the first chunk is the sample: it is deflated (work a compressible asset needs
///    anyway) and compression is kept only if it saved at least
///    ``AssetStorageOptions/minimumSavings``.
///
/// The choice and its reason are recorded on the asset row. Once compression is chosen, a chunk
/// that still does not shrink is stored as is, flagged in its own row.
enum CompressionPolicy {
    /// The name of an already-compressed format the bytes start with, or nil.
    static func compressedFormat(of prefix: UnsafeRawBufferPointer) -> String? {
        func starts(with signature: [UInt8], at offset: Int = 0) -> Bool {
            guard prefix.count >= offset + signature.count else { return false }
            for (index, byte) in signature.enumerated() where prefix[offset + index] != byte {
                return false
            }
            return true
        }
        if starts(with: [0xFF, 0xD8, 0xFF]) { return "jpeg" }
        if starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "png" }
        if starts(with: Array("GIF8".utf8)) { return "gif" }
        if starts(with: Array("RIFF".utf8)) && starts(with: Array("WEBP".utf8), at: 8) { return "webp" }
        // ISO base media (MP4, MOV, HEIC, AVIF, M4A): a box size, then "ftyp".
        if starts(with: Array("ftyp".utf8), at: 4) { return "isobmff" }
        if starts(with: [0x50, 0x4B, 0x03, 0x04]) || starts(with: [0x50, 0x4B, 0x05, 0x06]) { return "zip" }
        if starts(with: [0x1F, 0x8B]) { return "gzip" }
        if starts(with: [0x28, 0xB5, 0x2F, 0xFD]) { return "zstd" }
        if starts(with: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "xz" }
        if starts(with: Array("BZh".utf8)) { return "bzip2" }
        if starts(with: [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "7z" }
        if starts(with: Array("Rar!".utf8)) { return "rar" }
        if starts(with: Array("OggS".utf8)) { return "ogg" }
        if starts(with: [0x1A, 0x45, 0xDF, 0xA3]) { return "matroska" }
        if starts(with: Array("ID3".utf8)) { return "mp3" }
        if starts(with: Array("fLaC".utf8)) { return "flac" }
        if starts(with: [0x00, 0x00, 0x00, 0x0C, 0x6A, 0x50, 0x20, 0x20]) { return "jpeg2000" }
        return nil
    }

    /// Whether a compressed sample saved enough to keep compressing.
    static func pays(original: Int, compressed: Int, minimumSavings: Double) -> Bool {
        guard original > 0 else { return false }
        return Double(compressed) <= Double(original) * (1 - minimumSavings)
    }

    /// `sample:0.31`: the compressed-to-original ratio of the sample, two decimals.
    static func sampleReason(original: Int, compressed: Int) -> String {
        let ratio = original > 0 ? Double(compressed) / Double(original) : 1
        let hundredths = Int((ratio * 100).rounded())
        return "sample:\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }
}
