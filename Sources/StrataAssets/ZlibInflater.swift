import CZlib
import Foundation

/// One raw-inflate stream reused for every chunk of a read (see ``ZlibDeflater`` for why it is
/// reused and heap-allocated).
final class ZlibInflater {
    private let stream: UnsafeMutablePointer<z_stream>

    init() throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let code = strata_inflate_init2(stream, -15)
        guard code == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw AssetError.compressionFailed(code: code, message: "inflateInit2 failed")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Why a stored chunk could not be inflated into exactly the expected number of bytes.
    enum Failure: Error {
        case invalidData(Int32)
        case wrongLength
    }

    /// Inflates one complete raw-deflate stream into `output`, which must be exactly the
    /// chunk's recorded uncompressed size. Fails unless the stream ends exactly there and all
    /// the input is consumed: corrupt input can never write past `output` or yield a short chunk.
    func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(Failure) {
        var code = inflateReset(stream)
        guard code == Z_OK else { throw .invalidData(code) }
        // Chunks are never empty (an empty asset has no chunks), so an empty buffer here can
        // only come from a damaged row.
        guard let inputBase = input.baseAddress, let outputBase = output.baseAddress else { throw .wrongLength }
        // zlib counts in 32 bits: a damaged row must not trap converting its length.
        guard let inputCount = uInt(exactly: input.count), let outputCount = uInt(exactly: output.count) else {
            throw .wrongLength
        }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: inputBase.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = inputCount
        stream.pointee.next_out = outputBase.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = outputCount
        code = CZlib.inflate(stream, Z_FINISH)
        // Do not keep pointers into buffers the caller is about to release.
        stream.pointee.next_in = nil
        stream.pointee.next_out = nil
        switch code {
        case Z_STREAM_END:
            guard stream.pointee.avail_out == 0, stream.pointee.avail_in == 0 else { throw .wrongLength }
        case Z_BUF_ERROR, Z_OK:
            // Z_FINISH without reaching the end: the output was too small or the input too short.
            throw .wrongLength
        default:
            throw .invalidData(code)
        }
    }
}
