import Foundation
import StrataCloud
import Testing

@testable import StrataSync

/// The bytes a sealed record authenticates must never change: records sealed by an earlier
/// version have to open. Checked against a frozen copy of the first form (built with
/// `Data.append`), over names of every shape.
@Suite(.timeLimit(.minutes(2))) struct AssociatedDataTests {
    /// The first form of `RecordSealing.associatedData`, frozen.
    static func frozen(of record: CloudRecord, version: Int) -> Data {
        var data = Data()
        func append(_ text: String) {
            var text = text
            text.withUTF8 { bytes in
                append(UInt32(bytes.count))
                data.append(contentsOf: bytes)
            }
        }
        func append<Number: FixedWidthInteger>(_ number: Number) {
            withUnsafeBytes(of: number.bigEndian) { data.append(contentsOf: $0) }
        }
        append("strata.record.1")
        append(UInt32(version))
        append(record.id.zone.owner)
        append(record.id.zone.name)
        append(record.id.name)
        append(record.type)
        if let parent = record.parent {
            append(UInt8(1))
            append(parent.zone.owner)
            append(parent.zone.name)
            append(parent.name)
        } else {
            append(UInt8(0))
        }
        append(UInt32(record.fieldVersions.count))
        for (field, timestamp) in record.fieldVersions.sorted(by: { $0.key < $1.key }) {
            append(field)
            append(timestamp.milliseconds)
            append(timestamp.counter)
            append(timestamp.node)
        }
        return data
    }

    /// Names that sort or measure differently by bytes, scalars and characters.
    static let names = [
        "", "a", "A", "title", "é", "e\u{301}", "\u{1F600}", "\u{FF5E}", "z", "a\u{0}b", "名前", "_", "Z9",
        String(repeating: "x", count: 300),
    ]

    @Test func theBytesAreTheFirstFormsForEveryShapeOfRecord() {
        var generator = SystemRandomNumberGenerator()
        var checked = 0
        for round in 0..<400 {
            let pick = { Self.names.randomElement(using: &generator) ?? "" }
            var versions: [String: HybridTimestamp] = [:]
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                versions[pick()] = HybridTimestamp(
                    milliseconds: Int64.random(in: 0...Int64(1) << 47, using: &generator),
                    counter: UInt32.random(in: 0...(HybridTimestamp.counterLimit - 1), using: &generator), node: pick())
            }
            let zone = CloudZoneID(name: pick(), owner: pick())
            let record = CloudRecord(
                id: CloudRecordID(name: pick(), zone: zone), type: pick(), fieldVersions: versions,
                parent: round % 2 == 0 ? nil : CloudRecordID(name: pick(), zone: CloudZoneID(name: pick(), owner: pick())),
                changeTag: round % 3 == 0 ? nil : "tag-\(round)")
            for version in [0, 1, 7, Int(UInt32.max)] {
                #expect(
                    RecordSealing.associatedData(of: record, version: version) == Self.frozen(of: record, version: version),
                    "\(record)")
                checked += 1
            }
        }
        #expect(checked == 1_600)
    }
}
