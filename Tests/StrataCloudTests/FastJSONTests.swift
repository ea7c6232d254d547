import Foundation
import Testing

@testable import StrataCloud

/// The hand-written JSON form of records against their `Codable` form: what one writes the
/// other reads to the same value, and the fast reader never accepts text `JSONDecoder` refuses
/// or reads it differently.
@Suite(.timeLimit(.minutes(1)))
struct FastJSONTests {
    /// The wire's coders (StrataCloudWire's `CloudWire`), rebuilt here: this module sits below it.
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return decoder
    }

    @Test func randomRecordsReadBackEqualBothWays() throws {
        var random = SplitMix(seed: 20_261_124)
        for _ in 0..<2_000 {
            let record = Self.record(&random)
            let fast = try FastJSON.text(of: record)
            #expect(try Self.decoder().decode(CloudRecord.self, from: Data(fast.utf8)) == record, "\(fast)")
            let foundation = try Self.encoder().encode(record)
            #expect(try FastJSON.read(CloudRecord.self, from: String(decoding: foundation, as: UTF8.self)) == record)
        }
    }

    /// A record's text with its versions cut out of it (what the engine stores of a record it
    /// receives) equals the two written apart, whether the versions are all different, all one
    /// timestamp repeated (copied from the bytes written for the first), or alternate between
    /// two; and reads back as `JSONDecoder` reads it.
    @Test(arguments: ["random", "repeated", "alternating"])
    func aRecordsTextWithItsVersionsEqualsTheTwoWrittenApart(versions shape: String) throws {
        var random = SplitMix(seed: 20_261_127)
        let nodes = ["0f3e8c1a-1234-4abc-8def-0123456789ab", "a", "é😀-device", String(repeating: "n", count: 200)]
        for _ in 0..<1_000 {
            var record = Self.record(&random)
            if shape != "random" {
                let stamps = (0..<2).map { _ in
                    HybridTimestamp(
                        milliseconds: Int64.random(in: 0...999_999_999_999, using: &random),
                        counter: UInt32.random(in: 0...9, using: &random), node: nodes.randomElement(using: &random) ?? "a")
                }
                let columns = record.fields.keys.sorted() + ["extra-\(Int.random(in: 0..<5, using: &random))"]
                record.fieldVersions = Dictionary(
                    columns.enumerated().map { ($1, shape == "repeated" ? stamps[0] : stamps[$0 % 2]) }, uniquingKeysWith: { $1 })
            }
            let (text, versions) = record.text(withVersions: true)
            #expect(text == (try FastJSON.text(of: record)))
            #expect(versions == FastJSON.text(ofVersions: record.fieldVersions))
            #expect(record.text(withVersions: false).versions == nil)
            #expect(try Self.decoder().decode(CloudRecord.self, from: Data(text.utf8)) == record, "\(text)")
            let decodedVersions = try Self.decoder().decode([String: HybridTimestamp].self, from: Data((versions ?? "").utf8))
            #expect(decodedVersions == record.fieldVersions)
        }
    }

    @Test func equalRecordsWriteEqualBytes() throws {
        var random = SplitMix(seed: 7)
        for _ in 0..<200 {
            let record = Self.record(&random)
            var shuffled = record
            shuffled.fields = Dictionary(uniqueKeysWithValues: record.fields.shuffled(using: &random))
            #expect(try FastJSON.text(of: record) == FastJSON.text(of: shuffled))
        }
    }

    @Test func nonFiniteRealsTravelAsTheWiresStrings() throws {
        for value in [Double.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 1e-7] {
            var writer = JSONWriter()
            CloudValue.real(value).write(to: &writer)
            let decoded = try Self.decoder().decode(CloudValue.self, from: writer.data)
            var reader = JSONReader(writer.data)
            let read = try CloudValue(reading: &reader)
            for result in [decoded, read] {
                guard case .real(let back) = result else {
                    Issue.record("\(value) came back as \(result)")
                    continue
                }
                #expect(back.bitPattern == value.bitPattern || (back.isNaN && value.isNaN), "\(value)")
            }
        }
    }

    @Test(arguments: [
        // Integers at and past Int64's bounds, and numbers that are not integers.
        #"{"integer":{"_0":9223372036854775807}}"#, #"{"integer":{"_0":-9223372036854775808}}"#,
        #"{"integer":{"_0":9223372036854775808}}"#, #"{"integer":{"_0":-9223372036854775809}}"#,
        #"{"integer":{"_0":1.0}}"#, #"{"integer":{"_0":1e3}}"#, #"{"integer":{"_0":01}}"#, #"{"integer":{"_0":-0}}"#,
        #"{"integer":{"_0":"1"}}"#, #"{"real":{"_0":1e400}}"#, #"{"real":{"_0":-1E-400}}"#, #"{"real":{"_0":.5}}"#,
        #"{"real":{"_0":1.}}"#, #"{"real":{"_0":"Infinity"}}"#, #"{"real":{"_0":00.5}}"#, #"{"real":{"_0":0.0e-999}}"#,
        #"{"real":{"_0":4.9e-324}}"#, #"{"real":{"_0":2e-324}}"#, #"{"real":{"_0":1.7976931348623157e308}}"#, #"{"real":{"_0":1.8e308}}"#,
        // Strings: escapes, surrogates, control characters.
        #"{"text":{"_0":"\ud83d\ude00 \u00e9 \/ \" \\ \b\f\n\r\t"}}"#, #"{"text":{"_0":"\ud83d"}}"#, #"{"text":{"_0":"\ude00x"}}"#,
        "{\"text\":{\"_0\":\"a\u{01}b\"}}", #"{"text":{"_0":"\x"}}"#, #"{"text":{"_0":"\u00g0"}}"#,
        // Shapes: unknown, repeated and missing keys, two cases, extra payload keys.
        #"{"null":{}}"#, #"{"null":{"_0":1}}"#, #"{"null":null}"#, #"{"text":{"_0":"a"},"integer":{"_0":1}}"#,
        #"{"text":{"_0":"a","_1":"b"}}"#, #"{"text":{}}"#, #"{"text":{"_0":"a","_0":"b"}}"#, #"{"blob":{"_0":"a"}}"#, #"{}"#,
        #"{"bytes":{"_0":"AAEC"}}"#, #"{"bytes":{"_0":"AAE"}}"#, #"{"bytes":{"_0":"AA EC"}}"#,
        #"{"asset":{"_0":{"hash":"ab","size":3}}}"#, #"{"asset":{"_0":{"hash":"ab","size":3,"x":1}}}"#,
        #"{"asset":{"_0":{"hash":"ab"}}}"#, #" { "text" : { "_0" : "spaced" } } "#, #"{"text":{"_0":"a"}} x"#,
    ])
    func theFastReaderNeverAcceptsWhatJSONDecoderRefusesOrReadsDifferently(_ text: String) throws {
        try Self.expectAgreement(CloudValue.self, text)
    }

    /// Repeated keys at every level: the fast reader refuses them (no set of keys per object:
    /// each shape notices a key it already read), and `JSONDecoder` decides.
    @Test(arguments: [
        #"{"fieldVersions":{},"fields":{},"id":{"name":"a","zone":{"name":"z","owner":"o"}},"type":"t","type":"u"}"#,
        #"{"fieldVersions":{},"fields":{"a":{"null":{}},"a":{"integer":{"_0":1}}},"id":{"name":"a","zone":{"name":"z","owner":"o"}},"type":"t"}"#,
        #"{"fieldVersions":{},"fields":{},"id":{"name":"a","name":"b","zone":{"name":"z","owner":"o"}},"type":"t"}"#,
        #"{"fieldVersions":{},"fields":{},"id":{"name":"a","zone":{"name":"z","owner":"o","owner":"p"}},"type":"t"}"#,
        #"{"fieldVersions":{},"fields":{},"id":{"name":"a","zone":{"name":"z","owner":"o"}},"parent":null,"parent":null,"type":"t"}"#,
        #"{"changeTag":"x","changeTag":"y","fieldVersions":{},"fields":{},"id":{"name":"a","zone":{"name":"z","owner":"o"}},"type":"t"}"#,
    ])
    func repeatedKeysAreNeverReadDifferently(_ text: String) throws {
        try Self.expectAgreement(CloudRecord.self, text)
    }

    @Test func mutatedRecordsAreReadAsJSONDecoderReadsThemOrRefused() throws {
        var random = SplitMix(seed: 99)
        let alphabet = Array(#"{}[]":,\ 0123456789-+.eEtrufalsn_abcdefu"#.utf8)
        var accepted = 0
        for _ in 0..<3_000 {
            var bytes = Array(try FastJSON.text(of: Self.record(&random)).utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) where !bytes.isEmpty {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes.remove(at: at)
                case 1: bytes.insert(alphabet.randomElement(using: &random) ?? 0x20, at: at)
                case 2: bytes[at] = alphabet.randomElement(using: &random) ?? 0x20
                default:
                    // A run of bytes repeated: repeated keys, doubled values.
                    let end = min(bytes.count, at + Int.random(in: 1...24, using: &random))
                    bytes.insert(contentsOf: bytes[at..<end], at: end)
                }
            }
            if try Self.expectAgreement(CloudRecord.self, String(decoding: bytes, as: UTF8.self)) { accepted += 1 }
        }
        // Some mutations leave valid records (a changed digit or letter): both readers take those.
        #expect(accepted > 100)
    }

    /// Whether the fast reader accepted `text`; when it does, `JSONDecoder` must read the same
    /// value, and `FastJSON.decode` always answers as `JSONDecoder` does.
    @discardableResult
    static func expectAgreement<T: FastJSONCodable & Equatable>(_ type: T.Type, _ text: String) throws -> Bool {
        let data = Data(text.utf8)
        let foundation = Result { try decoder().decode(T.self, from: data) }
        let viaFastPath = Result { try FastJSON.decode(T.self, from: data, fallback: decoder()) }
        switch (foundation, viaFastPath) {
        case (.success(let expected), .success(let value)): #expect(value == expected, "\(text)")
        case (.failure, .failure): break
        default: Issue.record("JSONDecoder: \(foundation), FastJSON.decode: \(viaFastPath), for \(text)")
        }
        guard let fast = try? FastJSON.read(T.self, from: text) else { return false }
        guard case .success(let expected) = foundation else {
            Issue.record("the fast reader accepted what JSONDecoder refuses: \(text)")
            return true
        }
        #expect(fast == expected, "\(text)")
        return true
    }

    static let strings = [
        "", "a", "Ω≈ç√", "😀", "e\u{301}", "\"quoted\"", "back\\slash", "slash/", "tab\tnew\nline\r", "\u{0}\u{1}\u{1F}", "\u{7F}",
        String(repeating: "long ", count: 60),
    ]

    static func record(_ random: inout SplitMix) -> CloudRecord {
        func text() -> String {
            Int.random(in: 0..<3, using: &random) == 0
                ? strings.randomElement(using: &random) ?? "" : "n\(Int.random(in: 0..<1_000_000, using: &random))"
        }
        func value() -> CloudValue {
            switch Int.random(in: 0..<9, using: &random) {
            case 0: .null
            case 1: .integer([Int64.min, .max, 0, -1, 1].randomElement(using: &random) ?? 0)
            case 2: .integer(Int64.random(in: .min ... .max, using: &random))
            case 3: .real([0.1, -0.0, 1e300, 5e-324, 123.456, -2.5e-8].randomElement(using: &random) ?? 0)
            case 4: .real(Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &random)))
            case 5, 6: .text(text())
            case 7: .bytes(Data((0..<Int.random(in: 0..<70, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }))
            default: .asset(CloudAssetReference(hash: text(), size: Int64.random(in: 0...Int64.max, using: &random)))
            }
        }
        let zone = CloudZoneID(name: text(), owner: text())
        var fields: [String: CloudValue] = [:]
        var versions: [String: HybridTimestamp] = [:]
        for index in 0..<Int.random(in: 0..<12, using: &random) {
            let column = index % 4 == 3 ? text() : "c\(index)"
            fields[column] = value()
            if Bool.random(using: &random) {
                versions[column] = HybridTimestamp(
                    milliseconds: Int64.random(in: 0...999_999_999_999, using: &random), counter: UInt32.random(in: 0...9, using: &random),
                    node: ["a", "device-1", "é😀"].randomElement(using: &random) ?? "a")
            }
        }
        return CloudRecord(
            id: CloudRecordID(name: text(), zone: zone), type: text(), fields: fields, fieldVersions: versions,
            parent: Bool.random(using: &random) ? CloudRecordID(name: text(), zone: zone) : nil,
            changeTag: Bool.random(using: &random) ? "t\(Int.random(in: 0..<99, using: &random))" : nil)
    }
}

/// A small seeded generator, so a failing case comes back on every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
