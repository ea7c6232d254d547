import Crypto
import Dispatch
import Foundation

/// Computes the SHA-256 of an asset's content as its chunks are decoded, on a second thread.
///
/// Verifying the hash of everything read costs about a quarter of what inflating it does; done
/// in line, it would make reading that much slower. Hashing chunk *n* while chunk *n + 1* is read
/// and inflated hides that cost on any machine with two cores. At most two chunks wait for the
/// hasher, so memory stays bounded even if it falls behind. Single-chunk assets are hashed in
/// line: a thread hop would cost more than it hides.
final class ContentHasher: @unchecked Sendable {
    // @unchecked: `hasher` is only touched on `queue`, and `finalize` waits for the queue.
    private var hasher = SHA256()
    private let queue: DispatchQueue?
    private let slots = DispatchSemaphore(value: 2)

    init(chunkCount: Int) {
        queue = chunkCount > 1 ? DispatchQueue(label: "strata.assets.hash", qos: .userInitiated) : nil
    }

    /// Adds a chunk. The bytes are retained (`Data` is a value) until hashed.
    func update(_ chunk: Data) {
        guard let queue else {
            hasher.update(data: chunk)
            return
        }
        slots.wait()
        queue.async {
            self.hasher.update(data: chunk)
            self.slots.signal()
        }
    }

    /// Adds bytes the caller keeps alive and unchanged until ``finalize()`` returns.
    func update(unretained bytes: UnsafeRawBufferPointer) {
        guard let queue else {
            hasher.update(bufferPointer: bytes)
            return
        }
        let pending = UnretainedBytes(bytes: bytes)
        slots.wait()
        queue.async {
            self.hasher.update(bufferPointer: pending.bytes)
            self.slots.signal()
        }
    }

    /// Waits for the chunks added so far, and returns the identifier of their content.
    func finalize() -> AssetID {
        guard let queue else { return AssetID(digest: hasher.finalize()) }
        return queue.sync { AssetID(digest: hasher.finalize()) }
    }
}

/// A buffer handed to the hashing thread; its owner guarantees it outlives the hash.
private struct UnretainedBytes: @unchecked Sendable {
    let bytes: UnsafeRawBufferPointer
}
