import Testing

@testable import StrataCloud

/// A record's versions are mostly one text repeated, and the reader recognises a repeat by
/// its bytes: repeats, near-repeats, escaped texts and invalid ones around them.
@Suite(.timeLimit(.minutes(1)))
struct VersionsReadingTests {
    static func at(_ milliseconds: Int64, _ counter: UInt32, _ node: String) -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
    }

    @Test func repeatsNearRepeatsAndEscapesReadAsWritten() throws {
        let text = #"""
            {"a":"12.3@n","b":"12.3@n","c":"12.4@n","d":"12.3@n\"q","e":"12.3@n","f":"12.3@m","g":"12.3@n\"q","h":"12.3@\u006e","i":"21.3@n"}
            """#
        let versions = try #require(FastJSON.versions(from: text))
        #expect(
            versions == [
                "a": Self.at(12, 3, "n"), "b": Self.at(12, 3, "n"), "c": Self.at(12, 4, "n"), "d": Self.at(12, 3, "n\"q"),
                "e": Self.at(12, 3, "n"), "f": Self.at(12, 3, "m"), "g": Self.at(12, 3, "n\"q"), "h": Self.at(12, 3, "n"),
                "i": Self.at(21, 3, "n"),
            ])
    }

    @Test(arguments: [
        #"{"a":"12.3@n","b":"12.3@"}"#,
        #"{"a":"12.3@n","b":"12.3n"}"#,
        #"{"a":"12.3@n","b":"x"}"#,
        // A raw control character, which JSON allows only escaped.
        "{\"a\":\"12.3@n\",\"b\":\"12.3@n\u{01}\"}",
        #"{"a":"12.3@n","b":"12.3@n"#,
        #"{"a":"12.3@n","a":"12.3@n"}"#,
    ])
    func anInvalidTextAfterAValidOneIsRefused(text: String) {
        #expect(FastJSON.versions(from: text) == nil)
    }

    /// What the writer writes, the reader reads back, and repeated versions copied write the
    /// bytes formatting each would: random versions of a few texts, so that repeats, changes
    /// and returns to an earlier text all occur.
    @Test func randomVersionsRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        let nodes = ["n", "node-1", "é", "q\"uote", "back\\slash"]
        for _ in 0..<300 {
            var versions: [String: HybridTimestamp] = [:]
            for column in 0..<Int.random(in: 0...12, using: &generator) {
                versions["c\(column)"] = Self.at(
                    Int64.random(in: 0...2, using: &generator), UInt32.random(in: 0...1, using: &generator),
                    nodes.randomElement(using: &generator) ?? "n")
            }
            let text = FastJSON.text(ofVersions: versions)
            #expect(FastJSON.versions(from: text) == versions)
            // Repeats copied from the bytes before write what formatting each writes.
            var each = JSONWriter()
            each.object(versions) { writer, version in version.write(to: &writer) }
            #expect(text == each.text)
        }
    }
}
