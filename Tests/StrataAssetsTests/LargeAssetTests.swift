import Foundation
import StrataAssets
import StrataSQLite
import StrataTestSupport
import Testing

/// Tests that move hundreds of megabytes. Serialized, so that peak memory measured by one is not
/// inflated by the other.
@Suite(.timeLimit(.minutes(5)), .serialized) struct LargeAssetTests {
    @Test func fiftyMegabytes() async throws {
        let (_, store) = try makeStore()
        let data = TestBytes.text(count: 50 * 1024 * 1024)
        let descriptor = try await store.put(data)
        #expect(descriptor.size == Int64(data.count))
        #expect(descriptor.chunkCount == 200)
        #expect(descriptor.compression == .deflate)
        #expect(try await store.get(descriptor.id) == data)
        var offset = 0
        var matches = true
        for try await chunk in store.chunks(descriptor.id) {
            matches = matches && chunk == data[offset..<(offset + chunk.count)]
            offset += chunk.count
        }
        #expect(matches)
        #expect(offset == data.count)
    }

    /// Writes a 256 MiB file from a generator (never held in memory), stores it and reads it
    /// back, and checks that the process's peak resident memory grows by far less than its size.
    ///
    /// Peak resident memory is the process's: suites running beside this one add their own
    /// allocations to it (a full run once measured 72 MB here, where the test alone grows by a
    /// few). A store that held the asset would grow by its 256 MiB at every attempt, while
    /// others' allocations do not repeat on cue, so the smallest of up to three attempts is
    /// compared with the bound.
    @Test func memoryStaysBoundedForAQuarterGigabyte() throws {
        let directory = try TemporaryDirectory()
        let total = 256 * 1024 * 1024
        let pieceSize = 1024 * 1024
        let bound = 64 * 1024 * 1024

        // One pseudo-text block, shifted and stamped per piece, so each piece differs and the
        // whole is a realistic compressible stream.
        let file = directory.url.appendingPathComponent("large.bin")
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        let block = TestBytes.text(count: pieceSize + 4096)
        var piece = Data(count: pieceSize)
        var counter: UInt64 = 0
        while Int(counter) * pieceSize < total {
            let shift = Int(counter % 4096)
            piece.withUnsafeMutableBytes { destination in
                block.withUnsafeBytes { source in
                    destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[shift..<(shift + pieceSize)]))
                }
                withUnsafeBytes(of: counter.littleEndian) { stamp in
                    UnsafeMutableRawBufferPointer(rebasing: destination[0..<8]).copyMemory(from: stamp)
                }
            }
            try handle.write(contentsOf: piece)
            counter += 1
        }
        try handle.close()

        var writeGrowth = Int.max
        var readGrowth = Int.max
        var storedSize: Int64 = 0
        var chunkCount = 0
        var resetWorks = false
        for attempt in 1...3 where writeGrowth >= bound || readGrowth >= bound {
            // A new file each attempt: the store keeps content by hash, so a second put of the
            // same bytes into one file would store nothing.
            let store = try AssetStore(try DatabasePool(path: directory.path("large-\(attempt).sqlite")))
            resetWorks = ResidentMemory.resetPeak()
            let baselineBeforeWrite = resetWorks ? ResidentMemory.current : ResidentMemory.peak
            let descriptor = try store.put(contentsOf: file)
            writeGrowth = min(writeGrowth, ResidentMemory.peak - baselineBeforeWrite)
            #expect(descriptor.size == Int64(total))
            #expect(descriptor.compression == .deflate)
            (storedSize, chunkCount) = (descriptor.storedSize, descriptor.chunkCount)

            if resetWorks { ResidentMemory.resetPeak() }
            let baselineBeforeRead = resetWorks ? ResidentMemory.current : ResidentMemory.peak
            let reader = try store.open(descriptor.id)
            var readBytes = 0
            while let chunk = try reader.next() {
                readBytes += chunk.count
            }
            readGrowth = min(readGrowth, ResidentMemory.peak - baselineBeforeRead)
            #expect(readBytes == total)
            print(
                """
                [assets] 256 MiB asset, attempt \(attempt): stored \(storedSize) bytes in \(chunkCount) chunks; \
                peak RSS growth while storing \(writeGrowth / 1024) KiB, while reading \(readGrowth / 1024) KiB \
                (smallest so far; peak reset \(resetWorks ? "via clear_refs" : "unavailable, growth against the process peak"))
                """)
        }
        #expect(writeGrowth < bound, "peak resident memory grew by \(writeGrowth) bytes while storing, at every attempt")
        #expect(readGrowth < bound, "peak resident memory grew by \(readGrowth) bytes while reading, at every attempt")
    }
}
