/// FNV-1a, 64-bit: a name that is the same in every process (Swift's `Hasher` is seeded per
/// process).
struct StableHasher {
    private var state: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func combine(_ text: String) {
        for byte in text.utf8 {
            state ^= UInt64(byte)
            state = state &* 0x0000_0100_0000_01b3
        }
        state ^= 0xff
    }

    var hexDigest: String {
        let hex = String(state, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
