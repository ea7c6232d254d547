import Foundation
import Testing

@testable import StrataCloud

/// `JSONWriter.compactJSON` drops the whitespace between tokens (what PostgreSQL writes after
/// every `:` and `,` of a `jsonb` value) and nothing else: strings keep every byte, however
/// they escape quotes and backslashes.
@Suite(.timeLimit(.minutes(1)))
struct CompactJSONTests {
    static func compact(_ text: String) -> String {
        var writer = JSONWriter()
        writer.compactJSON(text)
        return writer.text
    }

    @Test(arguments: [
        (#"{"a": 1, "b": [1, 2, {"c": null}]}"#, #"{"a":1,"b":[1,2,{"c":null}]}"#),
        (" \n{\t\"a\" :\r\n \"x y\" } ", #"{"a":"x y"}"#),
        (#"{"k e y": "v , : { } [ ]  "}"#, #"{"k e y":"v , : { } [ ]  "}"#),
        (#"{"q": "a \" b", "r": "c"}"#, #"{"q":"a \" b","r":"c"}"#),
        (#"{"s": "ends in a backslash \\", "t": " x "}"#, #"{"s":"ends in a backslash \\","t":" x "}"#),
        (#"{"u": "\\\" still in ", "v": 2}"#, #"{"u":"\\\" still in ","v":2}"#),
        (#"{"é 😀": "\u00e9 😀 "}"#, #"{"é 😀":"\u00e9 😀 "}"#),
        ("{}", "{}"),
        ("{ }", "{}"),
        ("", ""),
        (" \t\r\n ", ""),
        (#""a b""#, #""a b""#),
    ])
    func whitespaceBetweenTokensGoesAndStringsStay(_ input: String, _ expected: String) {
        #expect(Self.compact(input) == expected)
    }

    /// Random records' fields and versions, spaced as `jsonb_out` spaces them, compact back to
    /// the text Strata writes, byte for byte.
    @Test func spacedRecordsCompactToTheirOwnText() throws {
        var random = SplitMix(seed: 20_261_207)
        for _ in 0..<1_000 {
            let record = FastJSONTests.record(&random)
            let fields = FastJSON.text(ofFields: record.fields)
            let versions = FastJSON.text(ofVersions: record.fieldVersions)
            #expect(Self.compact(ArrivedRecordTextTests.spaced(fields)) == fields)
            #expect(Self.compact(ArrivedRecordTextTests.spaced(versions)) == versions)
            #expect(Self.compact(fields) == fields)
        }
    }
}
