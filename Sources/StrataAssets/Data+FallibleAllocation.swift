import Foundation

extension Data {
    /// Uninitialized bytes for the caller to fill, or nil when the memory cannot be had.
    ///
    /// `Data(count:)` traps when the allocation fails; a buffer sized from stored metadata must
    /// fail with an error the caller can report instead.
    static func fallibleUninitialized(count: Int) -> Data? {
        guard count > 0 else { return count == 0 ? Data() : nil }
        guard let bytes = malloc(count) else { return nil }
        return Data(bytesNoCopy: bytes, count: count, deallocator: .free)
    }
}
