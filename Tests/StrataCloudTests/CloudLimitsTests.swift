import StrataCloud
import Testing

/// The request-size rule every cloud applies, at each bound ±1.
@Suite(.timeLimit(.minutes(1)))
struct CloudLimitsTests {
    static let zone = CloudZoneID(name: "z", owner: "alice")
    static func record(_ name: String, text: Int) -> CloudRecord {
        CloudRecord(id: CloudRecordID(name: name, zone: zone), type: "t", fields: ["f": .text(String(repeating: "x", count: text))])
    }

    @Test func itemsCountSavesAndDeletesTogether() throws {
        let limits = CloudLimits(maximumItemsPerRequest: 3)
        let two = [Self.record("a", text: 1), Self.record("b", text: 1)]
        try limits.checkModify(saving: two, deletingCount: 1)
        #expect(throws: CloudError.limitExceeded) { try limits.checkModify(saving: two, deletingCount: 2) }
        try limits.checkModify(saving: [], deletingCount: 3)
        #expect(throws: CloudError.limitExceeded) { try limits.checkModify(saving: [], deletingCount: 4) }
        try limits.checkFetch(count: 3)
        #expect(throws: CloudError.limitExceeded) { try limits.checkFetch(count: 4) }
    }

    @Test func savedBytesAreBoundedInTotalAndPerRecord() throws {
        let one = Self.record("a", text: 100)
        let size = one.encodedSize
        let limits = CloudLimits(maximumBytesPerRequest: 2 * size)
        try limits.checkModify(saving: [one, Self.record("b", text: 100)], deletingCount: 0)
        #expect(throws: CloudError.limitExceeded) { try limits.checkModify(saving: [one, Self.record("b", text: 101)], deletingCount: 0) }
        try limits.checkModify(saving: [one], deletingCount: 0, maximumRecordBytes: size)
        #expect(throws: CloudError.limitExceeded) { try limits.checkModify(saving: [one], deletingCount: 0, maximumRecordBytes: size - 1) }
    }
}
