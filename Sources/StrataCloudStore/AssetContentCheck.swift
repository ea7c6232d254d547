import CZlib
import Crypto
import Dispatch
import Foundation
import StrataCloud

/// Checks that an uploaded asset's chunks decode to content whose SHA-256 is the asset's hash,
/// so nobody can store bytes under another content's name. Sealed assets
/// (`CloudAsset.isSealed`) are not checked: their names are keyed hashes.
///
/// Deflated chunks are inflated through a fixed buffer, never into memory sized by the request,
/// and must produce exactly the chunk's declared size: a small body claiming a huge content
/// fails as soon as it passes the size, having cost no more than that size in work.
enum AssetContentCheck {
    /// Why `asset`'s content does not match its hash, or nil when it does. Runs on a thread of
    /// its own: hashing a large asset must not hold one of the cooperative pool's few threads.
    static func mismatch(of asset: CloudAsset) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: mismatchNow(of: asset))
            }
        }
    }

    static func mismatchNow(of asset: CloudAsset) -> String? {
        var hasher = SHA256()
        var inflater: Inflater?
        for (index, chunk) in asset.chunks.enumerated() {
            switch chunk.encoding {
            case CloudAsset.Chunk.storedEncoding:
                guard Int64(chunk.data.count) == chunk.size else {
                    return "chunk \(index) holds \(chunk.data.count) bytes, not \(chunk.size)"
                }
                hasher.update(data: chunk.data)
            case CloudAsset.Chunk.deflateEncoding:
                do {
                    let current = try inflater ?? Inflater()
                    inflater = current
                    try current.inflate(chunk.data, expecting: chunk.size) { hasher.update(bufferPointer: $0) }
                } catch {
                    return "chunk \(index) does not inflate to \(chunk.size) bytes"
                }
            case CloudAsset.Chunk.sealedEncoding:
                // Sealed assets skip this check; a sealed chunk among others has no content to hash.
                return "chunk \(index) is sealed, unlike the asset's other chunks"
            default:
                return "chunk \(index) has unknown encoding \(chunk.encoding)"
            }
        }
        let digest = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        return digest == asset.hash ? nil : "the content's SHA-256 is \(digest)"
    }

    /// One raw-inflate stream, reused for every chunk of an asset.
    final class Inflater {
        enum Failure: Error { case zlib(Int32), wrongLength }

        private let stream: UnsafeMutablePointer<z_stream>
        private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)

        init() throws(Failure) {
            stream = .allocate(capacity: 1)
            stream.initialize(to: z_stream())
            let code = strata_inflate_init2(stream, -15)
            guard code == Z_OK else {
                stream.deinitialize(count: 1)
                stream.deallocate()
                buffer.deallocate()
                throw .zlib(code)
            }
        }

        deinit {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
            buffer.deallocate()
        }

        /// Inflates one complete raw-deflate stream, handing each block of output to `consume`;
        /// fails unless it ends at exactly `expected` bytes with all input used.
        func inflate(_ data: Data, expecting expected: Int64, _ consume: (UnsafeRawBufferPointer) -> Void) throws(Failure) {
            guard inflateReset(stream) == Z_OK else { throw .wrongLength }
            guard let inputCount = uInt(exactly: data.count), inputCount > 0,
                let outputCapacity = uInt(exactly: buffer.count), let output = buffer.baseAddress
            else { throw .wrongLength }
            let result: Failure? = data.withUnsafeBytes { input in
                guard let base = input.baseAddress else { return .wrongLength }
                stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: Bytef.self))
                stream.pointee.avail_in = inputCount
                defer {
                    stream.pointee.next_in = nil
                    stream.pointee.next_out = nil
                }
                var produced: Int64 = 0
                while true {
                    stream.pointee.next_out = output.assumingMemoryBound(to: Bytef.self)
                    stream.pointee.avail_out = outputCapacity
                    let code = CZlib.inflate(stream, Z_NO_FLUSH)
                    let count = Int(outputCapacity - stream.pointee.avail_out)
                    produced += Int64(count)
                    if produced > expected { return .wrongLength }
                    consume(UnsafeRawBufferPointer(start: output, count: count))
                    if code == Z_STREAM_END { break }
                    guard code == Z_OK else { return .zlib(code) }
                }
                return produced == expected && stream.pointee.avail_in == 0 ? nil : .wrongLength
            }
            if let result { throw result }
        }
    }
}
