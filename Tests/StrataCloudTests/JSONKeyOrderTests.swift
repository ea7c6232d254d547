import Testing

@testable import StrataCloud

/// The writer's key order, compared on UTF-8 bytes, against UTF-16 code unit order (what
/// `JSONEncoder`'s `.sortedKeys` uses and what the writer used before): equal on every pair,
/// so no stored or sent JSON changes its bytes.
@Suite(.timeLimit(.minutes(1)))
struct JSONKeyOrderTests {
    static func utf16Order(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }

    /// Scalars from the ranges where the two encodings order differently (U+E000...U+FFFF
    /// against supplementary planes), around the encodings' length boundaries, and ASCII.
    static let scalars: [Unicode.Scalar] = [
        0x0, 0x1, 0x41, 0x5A, 0x61, 0x7F, 0x80, 0xFF, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xE001, 0xFB01, 0xFFFD, 0xFFFF,
        0x10000, 0x10001, 0x103FF, 0x10400, 0x1F3B2, 0x1F600, 0x10FFFF,
    ].compactMap(Unicode.Scalar.init(_:))

    static func text(_ random: inout SplitMix) -> String {
        var text = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...4, using: &random) {
            text.append(scalars[Int.random(in: 0..<scalars.count, using: &random)])
        }
        return String(text)
    }

    @Test func randomKeysSortAsUTF16Does() {
        var random = SplitMix(seed: 27)
        for _ in 0..<50_000 {
            let (a, b) = (Self.text(&random), Self.text(&random))
            #expect(JSONWriter.keyOrder(a, b) == Self.utf16Order(a, b), "\(Array(a.unicodeScalars)) vs \(Array(b.unicodeScalars))")
        }
    }

    @Test func everyPairOfBoundaryScalarsAfterACommonPrefix() {
        for prefix in ["", "a", "é", "\u{FFFF}", "🎲"] {
            for x in Self.scalars {
                for y in Self.scalars {
                    let (a, b) = (prefix + String(x), prefix + String(y))
                    #expect(JSONWriter.keyOrder(a, b) == Self.utf16Order(a, b), "\(x.value) vs \(y.value) after \(prefix)")
                }
            }
        }
    }

    /// An object's keys come out in UTF-16 order whatever their prefixes: keys equal for eight
    /// bytes and more, keys ending where another holds a NUL, non-ASCII in and after the first
    /// eight bytes, and objects of 0 to 40 keys (the insertion sort up to 16, the library's
    /// sort past it).
    @Test func objectsWriteTheirKeysInUTF16Order() {
        var random = SplitMix(seed: 2712)
        let stems = ["", "a", "createdA", "createdAt", "created\u{0}", "strata.c", "strata.counter.", "é", "ab\u{FFFF}", "ab🎲"]
        for round in 0..<3_000 {
            let count = round < 41 ? round : Int.random(in: 0...40, using: &random)
            var object: [String: Int] = [:]
            while object.count < count {
                let key = stems[Int.random(in: 0..<stems.count, using: &random)] + Self.text(&random)
                object[key] = object.count
            }
            var written = JSONWriter()
            written.object(object) { writer, value in writer.integer(Int64(value)) }
            var expected = JSONWriter()
            expected.raw("{")
            for (index, key) in object.keys.sorted(by: Self.utf16Order).enumerated() {
                if index > 0 { expected.raw(",") }
                expected.string(key)
                expected.raw(":")
                expected.integer(Int64(object[key] ?? -1))
            }
            expected.raw("}")
            #expect(written.bytes == expected.bytes, "\(object.keys.map { Array($0.unicodeScalars) })")
        }
    }

    @Test func columnNamesSortAsBefore() {
        let names = ["title", "id", "gameID", "score", "strata.sealed", "strata.counter.score", "Title", "_x", "name2", "name10", "ÿ", ""]
        #expect(names.sorted(by: JSONWriter.keyOrder) == names.sorted(by: Self.utf16Order))
    }
}

/// A timestamp written in place reads as its description would have been written.
@Suite(.timeLimit(.minutes(1)))
struct TimestampWritingTests {
    @Test(arguments: [Int64.min, -1, 0, 9, 10, 1_700_000_000_123, Int64.max])
    func writtenAsItsDescription(milliseconds: Int64) throws {
        for node in ["", "phone", "a\"b\\c", "\u{1}\n\t", "ключ🎲", "x@y.z"] {
            for counter: UInt32 in [0, 1, 10, 1 << 20] {
                let timestamp = HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
                var fast = JSONWriter()
                timestamp.write(to: &fast)
                var reference = JSONWriter()
                reference.string(timestamp.description)
                #expect(fast.bytes == reference.bytes, "\(timestamp)")
            }
        }
    }
}
