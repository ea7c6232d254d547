import Foundation
import Testing

@testable import StrataAssets

/// The whole-asset buffer is allocated fallibly: a size no allocator can satisfy yields nil
/// (reported as ``AssetError/outOfMemory(asset:byteCount:)``) rather than a trap.
@Suite(.timeLimit(.minutes(5))) struct FallibleAllocationTests {
    @Test func impossibleAllocationReturnsNil() {
        #expect(Data.fallibleUninitialized(count: Int.max) == nil)
        #expect(Data.fallibleUninitialized(count: -1) == nil)
    }

    @Test func possibleAllocationHasTheRequestedCount() {
        #expect(Data.fallibleUninitialized(count: 0)?.count == 0)
        #expect(Data.fallibleUninitialized(count: 4096)?.count == 4096)
    }
}
