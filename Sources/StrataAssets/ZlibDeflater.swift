import CZlib
import Foundation

/// One raw-deflate stream reused for every chunk of a put.
///
/// Each chunk is compressed as a complete, independent deflate stream (so any chunk can be read
/// without the ones before it), but the `z_stream` and its roughly 256 KiB of internal state are
/// allocated once and `deflateReset` between chunks: allocating them per chunk would cost more
/// than compressing a small chunk.
final class ZlibDeflater {
    /// Heap-allocated because zlib's state keeps a pointer back to its `z_stream` and rejects
    /// calls when the stream has moved; a Swift stored property has no stable address.
    private let stream: UnsafeMutablePointer<z_stream>
    /// Large enough for any chunk of `capacity` bytes, even incompressible ones (`deflateBound`).
    private let output: UnsafeMutableRawBufferPointer
    let capacity: Int

    /// - Parameters:
    ///   - level: zlib level, 0...9, or -1 for zlib's default (6).
    ///   - capacity: the largest input passed to ``deflate(_:)``.
    init(level: Int32, capacity: Int) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // -15: raw deflate, 32 KiB window. The zlib header and Adler-32 trailer would duplicate
        // the chunk's own CRC-32 and length, which the store records in the chunk row.
        let code = strata_deflate_init2(stream, level, -15, 8, Z_DEFAULT_STRATEGY)
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw AssetError.compressionFailed(code: code, message: "deflateInit2 failed")
        }
        self.capacity = capacity
        let bound = Int(deflateBound(stream, uLong(capacity)))
        output = .allocate(byteCount: max(bound, 64), alignment: 16)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Compresses `input` as one complete deflate stream and passes the compressed bytes to
    /// `body`. The buffer is only valid during the call.
    func deflate<T>(_ input: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        precondition(input.count <= capacity, "chunk larger than the deflater's capacity")
        var code = deflateReset(stream)
        guard code == Z_OK else { throw AssetError.compressionFailed(code: code, message: "deflateReset failed") }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        code = CZlib.deflate(stream, Z_FINISH)
        // With an output buffer of deflateBound bytes, one Z_FINISH call always completes.
        guard code == Z_STREAM_END else {
            throw AssetError.compressionFailed(code: code, message: "deflate did not finish the chunk")
        }
        let produced = output.count - Int(stream.pointee.avail_out)
        return try body(UnsafeRawBufferPointer(rebasing: output[0..<produced]))
    }
}
