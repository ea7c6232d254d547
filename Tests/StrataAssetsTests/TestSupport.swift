import Foundation
import StrataAssets
import StrataSQLite

/// Deterministic bytes for tests: fast to generate, reproducible from a seed.
struct TestBytes {
    /// Incompressible bytes (xorshift).
    static func random(count: Int, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) -> Data {
        var state = seed | 1
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            let words = count / 8
            let wordBuffer = buffer.bindMemory(to: UInt64.self)
            for index in 0..<words {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                wordBuffer[index] = state
            }
            for index in (words * 8)..<count {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[index] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    /// Text-like bytes that deflate compresses to roughly a third: log lines of words and numbers.
    static func text(count: Int, seed: UInt64 = 42) -> Data {
        let words = [
            "player", "score", "game", "round", "avatar", "update", "insert", "delete", "asset", "chunk",
            "strata", "record", "value", "table", "column", "level", "bonus", "team", "match", "time",
        ]
        .map { Array($0.utf8) }
        var state = seed | 1
        var bytes = [UInt8]()
        bytes.reserveCapacity(count + 64)
        while bytes.count < count {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            bytes.append(contentsOf: words[Int(state % 20)])
            bytes.append(UInt8(ascii: "="))
            bytes.append(contentsOf: Array(String(state % 100_000).utf8))
            bytes.append((state >> 40) % 7 == 0 ? UInt8(ascii: "\n") : UInt8(ascii: " "))
        }
        return Data(bytes.prefix(count))
    }
}

/// Peak and current resident memory of this process, from /proc/self/status.
enum ResidentMemory {
    /// Resets the peak (VmHWM) to the current resident size; false if the kernel refused.
    @discardableResult
    static func resetPeak() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }

    static var peak: Int { value(of: "VmHWM") }
    static var current: Int { value(of: "VmRSS") }

    /// A field of /proc/self/status, in bytes.
    private static func value(of field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            let digits = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return digits * 1024
        }
        return 0
    }
}

func makeStore(chunkSize: Int = 256 * 1024, compressionLevel: Int = 6) throws -> (DatabaseQueue, AssetStore) {
    let queue = try DatabaseQueue()
    let store = try AssetStore(queue, options: AssetStorageOptions(chunkSize: chunkSize, compressionLevel: compressionLevel))
    return (queue, store)
}
