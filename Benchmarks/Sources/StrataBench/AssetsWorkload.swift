import BenchSupport
import CZlibBench
import Foundation
import StrataAssets
import StrataSQLite

// The `assets` workload: StrataAssets against calling zlib directly on the same buffers at the
// same level, in the same run.
//
// - raw deflate: one deflate stream over the whole buffer (raw deflate, level 6, output buffer
//   of deflateBound bytes, one Z_FINISH call): the fastest way to call zlib on it.
// - raw inflate: the same output inflated back into a preallocated buffer.
// - store: `db.putAsset(data)` in a write transaction on a WAL file database: SHA-256, chunking,
//   deflate per 256 KiB chunk, CRC-32, inserts, commit.
// - load: `db.assetData(id)` in a read: reads, CRC-32 checks, inflates and SHA-256-verifies.
// - stream: `store.open(id)`, one read transaction per chunk, verified.
// Throughput is uncompressed bytes per second; ratios divide Strata's throughput by zlib's.
// Run: swift run -c release --package-path Benchmarks strata-bench --filter assets [--quick]

/// Runs the workload when a filter names it (`--filter assets`): it is not part of the default
/// run, whose table compares libraries on rows. Returns true when it was the only workload
/// selected, so the row workloads (and their seeding) can be skipped.
func runAssetsWorkloadIfSelected(_ options: Options) throws -> Bool {
    guard options.filters.contains(where: { "assets".contains($0) }) else { return false }
    try AssetsWorkload(quick: options.quick, directory: options.directory).run()
    return !options.filters.isEmpty && options.filters.allSatisfy { "assets".contains($0) }
}

struct AssetsWorkload {
    let quick: Bool
    let directory: String?
    let level: Int32 = 6

    func run() throws {
        let size = (quick ? 16 : 64) * 1024 * 1024
        let iterations = quick ? 3 : 5
        let folder = (directory ?? NSTemporaryDirectory()) + "/strata-bench-assets-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }

        print("")
        print(
            "assets — StrataAssets vs zlib \(String(cString: zlibVersion())) called directly, level \(level), \(size / 1024 / 1024) MiB buffers, median of \(iterations)"
        )
        for (name, data) in [("text", Self.text(count: size)), ("random", Self.random(count: size))] {
            try measure(name: name, data: data, iterations: iterations, path: folder + "/assets-\(name).sqlite")
        }
    }

    private func measure(name: String, data: Data, iterations: Int, path: String) throws {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let pool = try DatabasePool(path: path)
        defer { pool.close() }
        let store = try AssetStore(pool, options: AssetStorageOptions(compressionLevel: Int(level)))
        let id = AssetID(of: data)

        // The cases run in turn within each iteration, so that whatever else the machine does
        // weighs on zlib and on the store alike.
        var compressed = Data()
        var descriptor: AssetDescriptor?
        var times: [String: [Double]] = [:]
        let clock = ContinuousClock()
        func time(_ name: String, _ body: () throws -> Void) rethrows {
            let elapsed = try clock.measure(body)
            times[name, default: []].append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        }
        for iteration in 0...iterations {  // iteration 0 warms up and is dropped
            try time("deflate") { compressed = try Self.rawDeflate(data, level: level) }
            try pool.write { db in _ = try db.deleteAsset(id) }
            // Checkpoint so every store starts with an empty WAL.
            try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try time("store") { descriptor = try pool.write { db in try db.putAsset(data, options: store.options) } }
            try time("inflate") {
                guard try Self.rawInflate(compressed, size: data.count) == data.count else { throw BenchFailure("raw inflate length") }
            }
            try time("load") {
                let loaded = try pool.read { db in try db.assetData(id) }
                guard loaded.count == data.count else { throw BenchFailure("load length") }
            }
            try time("stream") {
                let reader = try store.open(id)
                var count = 0
                while let chunk = try reader.next() { count += chunk.count }
                guard count == data.count else { throw BenchFailure("stream length") }
            }
            if iteration == 0 { times = [:] }
        }
        func median(_ name: String) -> Double {
            let sorted = (times[name] ?? [.nan]).sorted()
            return sorted[sorted.count / 2]
        }
        let deflateSeconds = median("deflate"), storeSeconds = median("store")
        let inflateSeconds = median("inflate"), loadSeconds = median("load"), streamSeconds = median("stream")
        guard let descriptor else { throw BenchFailure("no descriptor") }

        func throughput(_ seconds: Double) -> String { String(format: "%7.1f MB/s", Double(data.count) / seconds / 1e6) }
        func ratio(_ baseline: Double, _ strata: Double) -> String { String(format: "%.2f", baseline / strata) }
        print(
            "  \(name): asset \(descriptor.compression.rawValue) (\(descriptor.compressionReason)), stored/original \(String(format: "%.3f", descriptor.compressionRatio)); raw deflate \(String(format: "%.3f", Double(compressed.count) / Double(data.count)))"
        )
        print("    raw deflate  \(throughput(deflateSeconds))   \(formatSeconds(deflateSeconds))")
        print(
            "    store        \(throughput(storeSeconds))   \(formatSeconds(storeSeconds))   store/deflate ratio \(ratio(deflateSeconds, storeSeconds))"
        )
        print("    raw inflate  \(throughput(inflateSeconds))   \(formatSeconds(inflateSeconds))")
        print(
            "    load         \(throughput(loadSeconds))   \(formatSeconds(loadSeconds))   load/inflate ratio \(ratio(inflateSeconds, loadSeconds))"
        )
        print(
            "    stream       \(throughput(streamSeconds))   \(formatSeconds(streamSeconds))   stream/inflate ratio \(ratio(inflateSeconds, streamSeconds))"
        )
    }

    // MARK: - zlib, called directly

    static func rawDeflate(_ data: Data, level: Int32) throws -> Data {
        var stream = z_stream()
        guard bench_deflate_init2(&stream, level, -15) == Z_OK else { throw BenchFailure("deflateInit2") }
        defer { deflateEnd(&stream) }
        var output = Data(count: Int(deflateBound(&stream, uLong(data.count))))
        let produced = try data.withUnsafeBytes { input in
            try output.withUnsafeMutableBytes { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { throw BenchFailure("deflate") }
                return out.count - Int(stream.avail_out)
            }
        }
        output.count = produced
        return output
    }

    static func rawInflate(_ compressed: Data, size: Int) throws -> Int {
        var stream = z_stream()
        guard bench_inflate_init2(&stream, -15) == Z_OK else { throw BenchFailure("inflateInit2") }
        defer { inflateEnd(&stream) }
        var output = Data(count: size)
        return try compressed.withUnsafeBytes { input in
            try output.withUnsafeMutableBytes { out in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(input.count)
                stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                stream.avail_out = uInt(out.count)
                guard inflate(&stream, Z_FINISH) == Z_STREAM_END else { throw BenchFailure("inflate") }
                return out.count - Int(stream.avail_out)
            }
        }
    }

    // MARK: - Data

    /// Log-like text (words and numbers): deflate level 6 shrinks it to about a third.
    static func text(count: Int) -> Data {
        let words = [
            "player", "score", "game", "round", "avatar", "update", "insert", "delete", "asset", "chunk",
            "strata", "record", "value", "table", "column", "level", "bonus", "team", "match", "time",
        ]
        .map { Array($0.utf8) }
        var state: UInt64 = 42
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

    /// Incompressible bytes: the store skips compression after its sample.
    static func random(count: Int) -> Data {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            for index in 0..<count / 8 {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer.storeBytes(of: state, toByteOffset: index * 8, as: UInt64.self)
            }
        }
        return data
    }
}
