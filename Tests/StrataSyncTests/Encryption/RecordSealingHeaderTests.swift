import Foundation
import StrataCloud
import Testing

@testable import StrataSync

/// The envelope's header read in place must answer exactly as the generic code it replaces, for
/// every length around the header's and every magic.
@Suite(.timeLimit(.minutes(1)))
struct RecordSealingHeaderTests {
    @Test func theHeaderVersionIsReadAsBeforeForEveryLengthAndMagic() {
        let versions: [UInt32] = [0, 1, 255, 256, 65_535, 1 << 24, (1 << 31) - 1, 1 << 31, .max]
        for version in versions {
            for length in 0...9 {
                for magic in [RecordSealing.magic, [0x53, 0x30], [0x52, 0x31], [0x31, 0x53]] {
                    var envelope = Data(magic)
                    withUnsafeBytes(of: version.bigEndian) { envelope.append(contentsOf: $0) }
                    envelope.append(contentsOf: [UInt8](repeating: 0xAB, count: 3))
                    let cut = Data(envelope.prefix(length))
                    let expected: Int? =
                        cut.count > 6 && cut.starts(with: RecordSealing.magic)
                        ? cut[(cut.startIndex + 2)..<(cut.startIndex + 6)].reduce(0) { $0 << 8 | Int($1) } : nil
                    #expect(RecordSealing.headerVersion(of: cut) == expected, "\(version), \(length), \(magic)")
                    // A slice that does not start at index 0 reads the same.
                    let sliced = (Data([0xFF, 0xFF]) + cut).dropFirst(2)
                    #expect(RecordSealing.headerVersion(of: sliced) == expected, "sliced \(version), \(length), \(magic)")
                }
            }
        }
    }
}
