import Testing

@testable import StrataCloud

/// Text compared as bytes (`hasSameBytes(as:)`, `ExactText`) against the plain oracle, the
/// arrays of their UTF-8 bytes: canonically equivalent spellings, prefixes, empty text, small
/// strings kept inline and long ones on the heap.
@Suite(.timeLimit(.minutes(1)))
struct ExactTextTests {
    static let samples: [String] = {
        var texts = [
            "", "a", "b", "ab", "abc", "abd", "ab\u{0}", "\u{0}", "caf\u{E9}", "cafe\u{301}", "cafe", "café-ü",
            "\u{10FFFF}", "\u{7F}", "\u{80}", "\u{FF}", "z", "Z", "😀", "😀a", "a😀", "tasks", "task", "tasks2",
            String(repeating: "x", count: 15), String(repeating: "x", count: 16), String(repeating: "x", count: 40),
            String(repeating: "x", count: 40) + "y", String(repeating: "é", count: 20),
            // Same length, differing only in the last byte, the first, or one in the middle.
            String(repeating: "x", count: 39) + "y", "y" + String(repeating: "x", count: 39),
            String(repeating: "x", count: 20) + "y" + String(repeating: "x", count: 19),
            // Copied out of a larger text (a substring's own storage).
            String(("prefix-" + String(repeating: "x", count: 40)).dropFirst(7)),
        ]
        var generator = SplitMix(seed: 27)
        let alphabet: [Character] = ["a", "b", "é", "e", "\u{301}", "😀", "0", ":", "\u{0}", "Z"]
        for _ in 0..<120 {
            let length = Int.random(in: 0...24, using: &generator)
            texts.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator) ?? "a" }))
        }
        return texts
    }()

    @Test func sameBytesAgreesWithTheBytesAndExactTextHashesAlike() {
        for left in Self.samples {
            for right in Self.samples {
                let (leftBytes, rightBytes) = (Array(left.utf8), Array(right.utf8))
                #expect(left.hasSameBytes(as: right) == (leftBytes == rightBytes), "\(leftBytes) \(rightBytes)")
                #expect((ExactText(left) == ExactText(right)) == (leftBytes == rightBytes), "\(leftBytes) \(rightBytes)")
                if leftBytes == rightBytes { #expect(ExactText(left).hashValue == ExactText(right).hashValue) }
                #expect(left.bytesPrecede(right) == leftBytes.lexicographicallyPrecedes(rightBytes), "\(leftBytes) \(rightBytes)")
            }
        }
    }

    @Test func canonicallyEquivalentSpellingsAreTwoTexts() {
        let (composed, decomposed) = ("caf\u{E9}", "cafe\u{301}")
        #expect(composed == decomposed)
        #expect(!composed.hasSameBytes(as: decomposed))
        var names = ExactKeyed<Int>()
        names[composed] = 1
        names[decomposed] = 2
        #expect(names[composed] == 1 && names[decomposed] == 2)
    }
}
