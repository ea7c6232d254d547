// An outside tester's attempts on the word-at-a-time string scan of `JSONReader` and on the
// spelling check that `CloudRecord(readingKeepingText:)` skips for a repeated version.
//
// The shapes here are the ones the commit's own tests do not generate: the special byte placed
// relative to the start of the whole input (not only of the string) at every offset modulo 8,
// at the very last byte of the input, thousands of bytes into a string, multi-byte UTF-8 split
// across words, invalid UTF-8 of every kind (overlong, surrogates, beyond U+10FFFF, truncated),
// raw NUL, input that ends right after a backslash or inside a `\u` escape, seeded fuzzing
// against `JSONDecoder`, and versions alternating between plain, padded, escaped and repeated
// spellings in many orders. Strings are compared by their UTF-8 bytes, never with `String`'s
// `==`, which takes canonically equivalent texts for equal.
import Foundation
import Testing

@testable import StrataCloud

@Suite(.timeLimit(.minutes(1)))
struct OutsideJSONScanTests {
    // MARK: - Helpers

    /// `JSONDecoder`'s reading of a whole input as one top-level string, nil when it refuses it.
    static func foundationString(_ bytes: [UInt8]) -> [UInt8]? {
        guard let text = try? FastJSONTests.decoder().decode(String.self, from: Data(bytes)) else { return nil }
        return Array(text.utf8)
    }

    /// The fast reader's reading of a whole input as one string, with `string()`.
    static func fastString(_ bytes: [UInt8]) -> [UInt8]? {
        var reader = JSONReader(Data(bytes))
        guard let text = try? reader.string(), (try? reader.end()) != nil else { return nil }
        return Array(text.utf8)
    }

    /// The same input read with `plainString()` first, then `string()` when it holds an escape
    /// (how `HybridTimestamp.readNotingRepeat` reads a version); also checks that a refused
    /// plain string leaves the reader where it was.
    static func fastPlainThenString(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [UInt8]? {
        var reader = JSONReader(Data(bytes))
        let before = reader.consumedCount
        let range: Range<Int>?
        do {
            range = try reader.plainString()
        } catch {
            return nil
        }
        if let range {
            guard let text = try? reader.text(range), (try? reader.end()) != nil else { return nil }
            #expect(Array(text.utf8) == Array(bytes[range]), sourceLocation: sourceLocation)
            return Array(text.utf8)
        }
        #expect(reader.consumedCount == before, "a refused plain string moved the reader", sourceLocation: sourceLocation)
        guard let text = try? reader.string(), (try? reader.end()) != nil else { return nil }
        return Array(text.utf8)
    }

    /// The fast reader never accepts what `JSONDecoder` refuses nor reads other bytes, by
    /// `string()`, by `plainString()`, and inside a `CloudValue`; `string()` and
    /// `plainString()` agree. Returns whether `JSONDecoder` accepted the input.
    @discardableResult
    static func expectAgreement(
        _ bytes: [UInt8], _ label: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation
    )
        -> Bool
    {
        let foundation = foundationString(bytes)
        let fast = fastString(bytes)
        let plain = fastPlainThenString(bytes, sourceLocation: sourceLocation)
        if let fast {
            #expect(foundation != nil, "string() accepted what JSONDecoder refuses: \(label()) \(bytes)", sourceLocation: sourceLocation)
            if let foundation {
                #expect(fast == foundation, "string() read other bytes: \(label()) \(bytes)", sourceLocation: sourceLocation)
            }
        }
        #expect(plain == fast, "plainString() and string() disagree: \(label()) \(bytes)", sourceLocation: sourceLocation)

        // The same string as a text value's payload, where it is not at the start of the input.
        let wrapped = Array(#"{"text":{"_0":"#.utf8) + bytes + Array("}}".utf8)
        let foundationValue = try? FastJSONTests.decoder().decode(CloudValue.self, from: Data(wrapped))
        var reader = JSONReader(Data(wrapped))
        if let fastValue = try? CloudValue(reading: &reader), (try? reader.end()) != nil {
            if case .text(let fastText) = fastValue, case .text(let foundationText)? = foundationValue {
                #expect(Array(fastText.utf8) == Array(foundationText.utf8), "\(label()) \(bytes)", sourceLocation: sourceLocation)
            } else {
                Issue.record(
                    "CloudValue(reading:) read \(fastValue), JSONDecoder \(String(describing: foundationValue)): \(label()) \(bytes)",
                    sourceLocation: sourceLocation)
            }
        }
        return foundation != nil
    }

    /// ASCII letters that are none of the bytes the scan stops at.
    static func filler(_ count: Int, from start: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(ascii: "a") + UInt8((start + $0) % 26) }
    }

    // MARK: - Offsets relative to the whole input

    /// What goes into a string: raw bytes as they stand in the JSON text, and whether a string
    /// holding them is valid JSON of valid UTF-8 (the fast reader must then accept it too).
    static let specials: [(name: String, bytes: [UInt8], valid: Bool)] = [
        ("a quote ending the string early", [0x22], false),
        ("an escaped quote", Array(#"\""#.utf8), true),
        ("an escaped backslash", Array(#"\\"#.utf8), true),
        ("an escaped slash", Array(#"\/"#.utf8), true),
        ("\\u0000", Array(#"\u0000"#.utf8), true),
        ("a surrogate pair", Array(#"\ud83d\ude00"#.utf8), true),
        ("a lone high surrogate", Array(#"\ud83d"#.utf8), false),
        ("a lone low surrogate", Array(#"\ude00"#.utf8), false),
        ("a reversed pair", Array(#"\ude00\ud83d"#.utf8), false),
        ("a high surrogate then a BMP escape", Array(#"\ud83d\u0041"#.utf8), false),
        ("an unknown escape", Array(#"\a"#.utf8), false),
        ("an uppercase U escape", Array(#"\U0041"#.utf8), false),
        ("a short u escape", Array(#"\u41"#.utf8), false),
        ("a raw NUL", [0x00], false),
        ("a raw 0x1F", [0x1F], false),
        ("a raw newline", [0x0A], false),
        ("a raw DEL", [0x7F], true),
        ("a raw space", [0x20], true),
        ("0x21", [0x21], true),
        ("0x23", [0x23], true),
        ("0x5B", [0x5B], true),
        ("0x5D", [0x5D], true),
        ("0x7E", [0x7E], true),
        ("é", Array("é".utf8), true),
        ("€", Array("€".utf8), true),
        ("😀", Array("😀".utf8), true),
        ("U+FFFF", [0xEF, 0xBF, 0xBF], true),
        ("U+FFFE", [0xEF, 0xBF, 0xBE], true),
        ("U+10FFFF", [0xF4, 0x8F, 0xBF, 0xBF], true),
        ("an overlong NUL", [0xC0, 0x80], false),
        ("an overlong slash", [0xC0, 0xAF], false),
        ("an overlong quote", [0xC0, 0xA2], false),
        ("an overlong backslash", [0xC1, 0x9C], false),
        ("a three-byte overlong", [0xE0, 0x80, 0xAF], false),
        ("a four-byte overlong", [0xF0, 0x80, 0x80, 0xAF], false),
        ("a UTF-8 high surrogate", [0xED, 0xA0, 0x80], false),
        ("a UTF-8 low surrogate", [0xED, 0xBF, 0xBF], false),
        ("a surrogate pair in CESU-8", [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80], false),
        ("beyond U+10FFFF", [0xF4, 0x90, 0x80, 0x80], false),
        ("an F5 lead byte", [0xF5, 0x80, 0x80, 0x80], false),
        ("0xFF", [0xFF], false),
        ("0xFE", [0xFE], false),
        ("a lone continuation", [0x80], false),
        ("a lone 0xBF", [0xBF], false),
        ("a truncated two-byte", [0xC3], false),
        ("a truncated three-byte", [0xE2, 0x82], false),
        ("a truncated four-byte", [0xF0, 0x9F, 0x98], false),
        ("a two-byte lead then a quote", [0xC3, 0x22], false),
        ("a three-byte lead then a backslash", [0xE2, 0x5C, 0x5C], false),
    ]

    /// Every special at every offset of strings of lengths around two words, with the string's
    /// opening quote at every offset modulo 8 of the input (leading whitespace), so the word
    /// boundaries fall at every place inside it.
    @Test(arguments: specials.indices)
    func everySpecialAtEveryOffsetOfTheInputReadsAsJSONDecoderReadsIt(_ special: Int) {
        let (name, inserted, valid) = Self.specials[special]
        for lead in 0..<8 {
            for length in 0...20 {
                for offset in 0...length {
                    var body = Self.filler(length)
                    body.insert(contentsOf: inserted, at: offset)
                    let input = Array(repeating: UInt8(ascii: " "), count: lead) + [0x22] + body + [0x22]
                    let accepted = Self.expectAgreement(input, "\(name), lead \(lead), offset \(offset) of \(length)")
                    if valid {
                        #expect(accepted, "JSONDecoder refused \(name)")
                        #expect(
                            Self.fastString(input) != nil, "the fast reader refused \(name), lead \(lead), offset \(offset) of \(length)")
                    }
                }
            }
        }
    }

    /// The special byte as the very last byte of the input, the string unterminated, at every
    /// offset modulo 8 of the input: the word loop must not read past the end, and the byte
    /// loop must report an unterminated string, never a plain one.
    @Test(arguments: specials.indices)
    func aSpecialAsTheLastByteOfTheInput(_ special: Int) {
        let (name, inserted, _) = Self.specials[special]
        // A quote as the last byte closes the string: a whole input.
        guard inserted != [0x22] else { return }
        for lead in 0..<8 {
            for length in 0...24 {
                let input = Array(repeating: UInt8(ascii: "\t"), count: lead) + [0x22] + Self.filler(length) + inserted
                #expect(Self.fastString(input) == nil, "\(name) ending the input, lead \(lead), length \(length)")
                #expect(Self.fastPlainThenString(input) == nil, "\(name) ending the input, lead \(lead), length \(length)")
                #expect(Self.foundationString(input) == nil)
            }
        }
    }

    /// Inputs that end inside an escape: right after the backslash, after `\u` and one to three
    /// hex digits, after a high surrogate and its backslash, at every offset modulo 8.
    @Test func inputEndingInsideAnEscape() {
        let tails = [#"\"#, #"\u"#, #"\u0"#, #"\u00"#, #"\u004"#, #"\ud83d"#, #"\ud83d\"#, #"\ud83d\u"#, #"\ud83d\ude0"#, #"\""#, #"\\"#]
        for tail in tails {
            for lead in 0..<8 {
                for length in 0...17 {
                    let input = Array(repeating: UInt8(ascii: " "), count: lead) + [0x22] + Self.filler(length) + Array(tail.utf8)
                    #expect(Self.fastString(input) == nil, "\(tail) ending the input after \(length) bytes, lead \(lead)")
                    #expect(Self.fastPlainThenString(input) == nil)
                    #expect(Self.foundationString(input) == nil)
                    // Closed right after: a complete escape reads, a cut one is refused by both.
                    Self.expectAgreement(input + [0x22], "\(tail) then a quote")
                }
            }
        }
    }

    /// Strings of thousands of bytes with one special byte anywhere, and a special as the last
    /// byte before the closing quote or as the last byte of the input.
    @Test func longStringsWithOneSpecialAnywhere() {
        var random = SplitMix(seed: 0x0DD5_CA9E)
        for round in 0..<400 {
            let length = Int.random(in: 1_000...6_000, using: &random)
            let special = Self.specials.randomElement(using: &random) ?? Self.specials[0]
            var body = Self.filler(length, from: round)
            let at: Int
            switch round % 4 {
            case 0: at = 0
            case 1: at = length
            default: at = Int.random(in: 0...length, using: &random)
            }
            body.insert(contentsOf: special.bytes, at: at)
            let lead = Int.random(in: 0..<8, using: &random)
            let input = Array(repeating: UInt8(ascii: " "), count: lead) + [0x22] + body + [0x22]
            let accepted = Self.expectAgreement(input, "\(special.name) at \(at) of \(length), lead \(lead)")
            if special.valid {
                #expect(accepted)
                #expect(Self.fastString(input) != nil, "the fast reader refused \(special.name) at \(at) of \(length)")
            }
            // Unterminated: the long string runs to the end of the input (unless a quote
            // inserted at its end now closes it).
            if special.bytes == [0x22] && at == length { continue }
            #expect(Self.fastString(Array(input.dropLast())) == nil, "\(special.name) at \(at) of \(length), unterminated")
        }
    }

    /// Long plain strings of every length around many words, with and without a multi-byte
    /// character as the final byte(s) before the quote: what the scan ends on is the quote.
    @Test func longPlainStringsOfEveryLength() throws {
        for length in 0...300 {
            for tail in [[], Array("é".utf8), Array("😀".utf8), [UInt8(0x7F)]] as [[UInt8]] {
                let body = Self.filler(length) + tail
                let input = [0x22] + body + [0x22]
                #expect(Self.fastString(input) == body, "length \(length), tail \(tail)")
                #expect(Self.fastPlainThenString(input) == body)
                #expect(Self.foundationString(input) == body)
            }
        }
    }

    /// Every multi-byte character split across every word boundary: its lead byte at each of the
    /// eight places of a word, in strings placed at each offset of the input.
    @Test func multiByteCharactersSplitAcrossWords() {
        let characters = ["é", "ß", "€", "한", "\u{FFFD}", "😀", "𝄞", "\u{10FFFF}", "e\u{301}", "👩‍👩‍👧"]
        for character in characters {
            for lead in 0..<8 {
                for offset in 0..<17 {
                    for after in [0, 1, 7, 8, 9] {
                        let body = Self.filler(offset) + Array(character.utf8) + Self.filler(after, from: 3)
                        let input = Array(repeating: UInt8(ascii: " "), count: lead) + [0x22] + body + [0x22]
                        #expect(Self.fastString(input) == body, "\(character) at \(offset), lead \(lead), \(after) after")
                        #expect(Self.fastPlainThenString(input) == body)
                        Self.expectAgreement(input, "\(character) at \(offset)")
                    }
                }
            }
        }
    }

    /// A Data slice (its indices not starting at 0) reads as the same bytes from 0 do.
    @Test func aDataSliceReadsLikeItsBytes() throws {
        let bytes = Array(#"xxxxxxx"abcdefghijklmnopé\u00e9"#.utf8) + [0x22]
        let data = Data(bytes)[7...]
        var reader = JSONReader(data)
        #expect(try Array(reader.string().utf8) == Array("abcdefghijklmnopéé".utf8))
        try reader.end()
    }

    // MARK: - Fuzzing against JSONDecoder

    /// Pieces of string bodies, heavy in the bytes the scan stops at.
    static let pieces: [[UInt8]] = {
        let texts = [
            "abcdefgh", "a", "0123456789abcdef", " ", "\"", #"\n"#, #"\t"#, #"\b\f\r"#, #"\u00e9"#, #"\uFFFF"#, #"\uDBFF\uDFFF"#,
            #"\uD800\uDC00"#, #"\uD800"#, #"\u0022"#, #"\u005c"#, #"\u001f"#, #"\"#,
        ]
        let raw: [[UInt8]] = [[0x09], [0x0D], [0x19], [0x7F], [0x80, 0x80]]
        return specials.map(\.bytes) + texts.map { Array($0.utf8) } + raw
    }()

    @Test func seededFuzzingAgainstJSONDecoder() {
        var random = SplitMix(seed: 20_261_201)
        var accepted = 0
        for round in 0..<20_000 {
            var body: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                if Int.random(in: 0..<4, using: &random) == 0 {
                    body += Self.filler(Int.random(in: 0...40, using: &random), from: round)
                } else {
                    body += Self.pieces.randomElement(using: &random) ?? []
                }
            }
            if round % 50 == 0 { body.insert(contentsOf: Self.filler(Int.random(in: 500...3_000, using: &random)), at: 0) }
            let lead = Array(repeating: UInt8(ascii: " "), count: Int.random(in: 0..<8, using: &random))
            var input = lead + [0x22] + body
            switch Int.random(in: 0..<10, using: &random) {
            case 0: break  // unterminated
            case 1: input += [0x22, UInt8(ascii: "x")]  // text after the value
            case 2: input += [0x22, 0x20, 0x0A]
            default: input += [0x22]
            }
            if Self.expectAgreement(input, "round \(round)") { accepted += 1 }
        }
        // Many of the strings are valid: both readers take those.
        #expect(accepted > 2_000)
    }

    /// Random bytes, any of the 256, in strings of random length: whatever the fast reader
    /// accepts, `JSONDecoder` accepts and reads as the same bytes.
    @Test func randomBytesAgainstJSONDecoder() {
        var random = SplitMix(seed: 8_675_309)
        for round in 0..<20_000 {
            let length = Int.random(in: 0...24, using: &random)
            let body = (0..<length).map { _ -> UInt8 in
                // Mostly ordinary ASCII, so that words get scanned whole now and then.
                Int.random(in: 0..<3, using: &random) == 0
                    ? UInt8.random(in: 0...255, using: &random) : UInt8.random(in: 0x23...0x5B, using: &random)
            }
            let lead = Array(repeating: UInt8(ascii: " "), count: Int.random(in: 0..<8, using: &random))
            Self.expectAgreement(lead + [0x22] + body + [0x22], "round \(round)")
        }
    }

    /// Mutated records (bytes from the scan's special set dropped into their strings) are read
    /// by `CloudRecord(reading:)` and `CloudRecord(readingKeepingText:)` as `JSONDecoder`
    /// reads them, or refused; a kept text reads back as the record.
    @Test func mutatedRecordsWithSpecialBytesInStrings() throws {
        var random = SplitMix(seed: 31_337)
        var accepted = 0
        for round in 0..<3_000 {
            var bytes = Array(try FastJSON.text(of: FastJSONTests.record(&random)).utf8)
            for _ in 0..<Int.random(in: 1...2, using: &random) {
                // Into a string: just after a quote.
                let quotes = bytes.indices.filter { bytes[$0] == 0x22 }
                guard let quote = quotes.randomElement(using: &random) else { break }
                bytes.insert(contentsOf: Self.pieces.randomElement(using: &random) ?? [], at: quote + 1)
            }
            let data = Data(bytes)
            let foundation = try? FastJSONTests.decoder().decode(CloudRecord.self, from: data)
            var reader = JSONReader(data)
            let fast = try? CloudRecord(reading: &reader)
            let fastWhole = fast != nil && (try? reader.end()) != nil
            var keepingReader = JSONReader(data)
            let keeping = try? CloudRecord(readingKeepingText: &keepingReader)
            let keepingWhole = keeping != nil && (try? keepingReader.end()) != nil
            #expect(fastWhole == keepingWhole, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
            guard fastWhole, let fast else { continue }
            accepted += 1
            guard let foundation else {
                Issue.record("the fast reader accepted what JSONDecoder refuses: \(bytes)")
                continue
            }
            #expect(try FastJSON.text(of: fast) == FastJSON.text(of: foundation), "round \(round)")
            if let keeping {
                #expect(try FastJSON.text(of: keeping) == FastJSON.text(of: foundation))
                if let arrived = keeping.arrivedText {
                    #expect(Array(arrived.text.utf8) == bytes, "round \(round)")
                    #expect(try FastJSON.text(of: FastJSON.read(CloudRecord.self, from: arrived.text)) == FastJSON.text(of: foundation))
                }
            }
        }
        #expect(accepted > 100)
    }

    // MARK: - Versions: plain, padded, escaped and repeated

    /// Spellings of one version: its canonical text, and others that read as the same value.
    static func spellings(milliseconds: Int64, counter: UInt32, node: String) -> [(text: String, canonical: Bool)] {
        let canonical = "\(milliseconds).\(counter)@\(node)"
        let padded = milliseconds < 0 ? "-0\(-milliseconds)" : "0\(milliseconds)"
        let firstEscaped = String(format: "\\u%04x", Int(canonical.utf8.first ?? 0)) + canonical.dropFirst()
        var result: [(String, Bool)] = [
            (canonical, true),
            ("\(padded).\(counter)@\(node)", false),
            ("\(milliseconds).0\(counter)@\(node)", false),
            (firstEscaped, false),
            ("\(milliseconds)\\u002e\(counter)@\(node)", false),
            ("\(milliseconds).\(counter)\\u0040\(node)", false),
            ("\(milliseconds).\(counter)@\\/\(node.dropFirst())", false),
        ]
        if milliseconds == 0 { result.append(("-0.\(counter)@\(node)", false)) }
        // `\/` for a slash the node holds: only when it holds one.
        return result.filter { !$0.0.contains(#"@\/"#) || node.hasPrefix("/") }
    }

    static func recordText(versions: [(key: String, spelling: String)]) -> String {
        let object = versions.map { "\"\($0.key)\":\"\($0.spelling)\"" }.joined(separator: ",")
        return #"{"fieldVersions":{"# + object + #"},"fields":{},"id":{"name":"r","zone":{"name":"z","owner":"o"}},"type":"t"}"#
    }

    /// Random sequences of two or three versions, each spelled in any of its ways, repeated in
    /// runs and alternating: the text is kept exactly when every version is spelled as its
    /// `description`, and the versions read are `JSONDecoder`'s.
    @Test func versionsAlternatingBetweenSpellingsInManyOrders() throws {
        var random = SplitMix(seed: 1_764_000_000)
        let stamps: [(Int64, UInt32, String)] = [
            (1_700_000_000_000, 0, "n"), (1, 0, "x"), (0, 0, "/dev"), (-5, 3, "é😀"), (1_700_000_000_000, 12, "0f3e8c1a-1234-4abc"),
        ]
        var kept = 0
        var refused = 0
        for round in 0..<4_000 {
            let chosen = (0..<Int.random(in: 1...3, using: &random)).map { _ in stamps.randomElement(using: &random) ?? stamps[0] }
            let options = chosen.map { Self.spellings(milliseconds: $0.0, counter: $0.1, node: $0.2) }
            var versions: [(key: String, spelling: String)] = []
            var allCanonical = true
            var expected: [String: HybridTimestamp] = [:]
            let count = Int.random(in: 1...12, using: &random)
            var previous: (stamp: Int, spelling: Int)?
            for index in 0..<count {
                // Runs of one spelling, switches of stamp or of spelling.
                let pick: (stamp: Int, spelling: Int)
                if let previous, Int.random(in: 0..<3, using: &random) != 0 {
                    pick = previous
                } else {
                    let stamp = Int.random(in: 0..<chosen.count, using: &random)
                    // Mostly the canonical spelling, so a lone odd one sits among repeats.
                    let spelling =
                        Int.random(in: 0..<3, using: &random) == 0 ? Int.random(in: 0..<options[stamp].count, using: &random) : 0
                    pick = (stamp, spelling)
                }
                previous = pick
                let spelling = options[pick.stamp][pick.spelling]
                allCanonical = allCanonical && spelling.canonical
                versions.append(("c\(index)", spelling.text))
                let stamp = chosen[pick.stamp]
                expected["c\(index)"] = HybridTimestamp(milliseconds: stamp.0, counter: stamp.1, node: stamp.2)
            }
            let text = Self.recordText(versions: versions)
            let foundation = try FastJSONTests.decoder().decode(CloudRecord.self, from: Data(text.utf8))
            #expect(foundation.fieldVersions == expected, "\(text)")
            var reader = JSONReader(text)
            guard let record = try? CloudRecord(readingKeepingText: &reader) else {
                refused += 1
                continue
            }
            #expect(record.fieldVersions == foundation.fieldVersions, "\(text)")
            for (key, version) in record.fieldVersions {
                #expect(Array(version.node.utf8) == Array((foundation.fieldVersions[key]?.node ?? "").utf8))
            }
            #expect((record.arrivedText != nil) == allCanonical, "round \(round): \(text)")
            if record.arrivedText != nil { kept += 1 }
            var plainReader = JSONReader(text)
            #expect(try CloudRecord(reading: &plainReader) == foundation)
            #expect(
                FastJSON.versions(from: String(text.dropFirst(#"{"fieldVersions":"#.count).prefix(while: { $0 != "}" })) + "}") == expected)
        }
        #expect(refused == 0)
        #expect(kept > 200)
    }

    /// Every order of a canonical version, the same version padded, the same version escaped and
    /// a second canonical version, each twice in a row or alone.
    @Test func everyOrderOfFourSpellings() throws {
        let spellings: [(text: String, canonical: Bool)] = [
            ("1700.0@n", true), ("01700.0@n", false), (#"1700.0@\u006e"#, false), ("1701.0@n", true),
        ]
        func permutations(_ items: [Int]) -> [[Int]] {
            guard items.count > 1 else { return [items] }
            return items.indices.flatMap { index in
                var rest = items
                let first = rest.remove(at: index)
                return permutations(rest).map { [first] + $0 }
            }
        }
        for order in permutations(Array(spellings.indices)) {
            for doubled in 0..<16 {
                var sequence: [Int] = []
                for (position, item) in order.enumerated() {
                    sequence.append(item)
                    if doubled & (1 << position) != 0 { sequence.append(item) }
                }
                for dropped in 0..<spellings.count {
                    let used = sequence.filter { $0 != dropped }
                    let versions = used.enumerated().map { ("k\($0.offset)", spellings[$0.element].text) }
                    let text = Self.recordText(versions: versions)
                    var reader = JSONReader(text)
                    let record = try CloudRecord(readingKeepingText: &reader)
                    let keeps = used.allSatisfy { spellings[$0].canonical }
                    #expect((record.arrivedText != nil) == keeps, "\(text)")
                    #expect(record == (try FastJSONTests.decoder().decode(CloudRecord.self, from: Data(text.utf8))))
                }
            }
        }
    }

    /// A repeated version is recognised by its bytes: one of the same length that differs in
    /// one byte anywhere (a digit, the node), or that differs only past the first word, is read
    /// as itself, not as the one before it.
    @Test func aVersionDifferingInOneByteIsNotTakenForARepeat() throws {
        let base = "1700000000000.123@0f3e8c1a-1234-4abc-8def-0123456789ab"
        let bytes = Array(base.utf8)
        for position in bytes.indices {
            var changed = bytes
            switch bytes[position] {
            case UInt8(ascii: "0")...UInt8(ascii: "8"), UInt8(ascii: "a")...UInt8(ascii: "e"): changed[position] += 1
            case UInt8(ascii: "9"): changed[position] = UInt8(ascii: "1")
            default: continue
            }
            let other = String(decoding: changed, as: UTF8.self)
            guard let expected = HybridTimestamp(other) else { continue }
            let text = Self.recordText(versions: [("a", base), ("b", other), ("c", base), ("d", other), ("e", other)])
            var reader = JSONReader(text)
            let record = try CloudRecord(readingKeepingText: &reader)
            #expect(record.fieldVersions["b"] == expected, "\(other)")
            #expect(record.fieldVersions["d"] == expected)
            #expect(record.fieldVersions["e"] == expected)
            #expect(record.fieldVersions["a"] == HybridTimestamp(base))
            #expect(record.fieldVersions["c"] == HybridTimestamp(base))
            #expect(record.arrivedText != nil)
        }
    }

    /// A version over the length limit, repeated: refused by both readers, also when the first
    /// spelling is escaped and the repeats plain, or the reverse.
    @Test func aTooLongVersionRepeatedIsRefusedByBoth() throws {
        let node = String(repeating: "n", count: HybridTimestamp.maximumTextLength)
        let long = "1.0@\(node)"
        let escaped = #"1.0@\u006e"# + node.dropFirst()
        for versions in [[long, long], [escaped, long, long], [long, escaped], ["1.0@n", long, long]] {
            let text = Self.recordText(versions: versions.enumerated().map { ("k\($0.offset)", $0.element) })
            #expect((try? FastJSONTests.decoder().decode(CloudRecord.self, from: Data(text.utf8))) == nil)
            var reader = JSONReader(text)
            #expect((try? CloudRecord(readingKeepingText: &reader)) == nil, "\(versions.map(\.count))")
        }
        // At the limit, both read it.
        let atLimit = "1.0@" + String(repeating: "é", count: HybridTimestamp.maximumTextLength - 4)
        let text = Self.recordText(versions: [("a", atLimit), ("b", atLimit)])
        let foundation = try FastJSONTests.decoder().decode(CloudRecord.self, from: Data(text.utf8))
        var reader = JSONReader(text)
        let record = try CloudRecord(readingKeepingText: &reader)
        #expect(record == foundation)
        #expect(record.arrivedText != nil)
    }

    /// A page of records read one after another from one reader: each keeps its text or not on
    /// its own spellings alone (an escaped key or odd version in one record says nothing of the
    /// next), and a repeat is never matched against the previous record's versions.
    @Test func recordsOfOnePageKeepTextOnTheirOwnSpellings() throws {
        let records: [(text: String, keeps: Bool)] = [
            (Self.recordText(versions: [("a", "1.0@n"), ("b", "1.0@n")]), true),
            (Self.recordText(versions: [("a", "01.0@n"), ("b", "01.0@n")]), false),
            (Self.recordText(versions: [("a", "01.0@n")]).replacingOccurrences(of: "01.0", with: "1.0"), true),
            (Self.recordText(versions: [("\\u0061", "1.0@n")]), false),
            (Self.recordText(versions: [("a", "1.0@n")]), true),
            (Self.recordText(versions: [("a", "1.0@n")]).replacingOccurrences(of: #""type""#, with: #""typ\u0065""#), false),
            (Self.recordText(versions: [("a", #"1.0@\u006e"#), ("b", "1.0@n")]), false),
            (Self.recordText(versions: [("a", "1.0@n"), ("b", #"1.0@\u006e"#), ("c", "1.0@n")]), false),
            (Self.recordText(versions: []), true),
        ]
        var random = SplitMix(seed: 5)
        for round in 0..<200 {
            let order = round == 0 ? Array(records.indices) : records.indices.shuffled(using: &random)
            let page = "[" + order.map { records[$0].text }.joined(separator: ",\n ") + "]"
            var reader = JSONReader(page)
            let read = try reader.array { reader throws(JSONReaderError) in try CloudRecord(readingKeepingText: &reader) }
            try reader.end()
            for (record, index) in zip(read, order) {
                #expect((record.arrivedText != nil) == records[index].keeps, "\(records[index].text)")
                if let arrived = record.arrivedText { #expect(arrived.text == records[index].text) }
            }
        }
    }

    /// Keys spelled with an escape at the end of a word, across words, as the last bytes before
    /// the closing quote: each is counted, and a key spelled plainly never is.
    @Test func escapedKeysAreCountedAtEveryOffset() throws {
        for lead in 0..<8 {
            for length in 0...18 {
                let plain = String(decoding: Self.filler(length), as: UTF8.self)
                for escape in [#"\u0061"#, #"\/"#, #"\\"#, #"\""#, #"\ud83d\ude00"#] {
                    let spaces = String(repeating: " ", count: lead)
                    let text = spaces + "{\"\(plain)\":1,\"\(plain)\(escape)\":2, \"é\(plain)\":3}"
                    var reader = JSONReader(text)
                    var keys: [String] = []
                    try reader.object { reader, key throws(JSONReaderError) in
                        keys.append(key)
                        _ = try reader.integer()
                    }
                    try reader.end()
                    #expect(reader.escapedKeyCount == 1, "\(text)")
                    let foundation = try JSONDecoder().decode([String: Int].self, from: Data(text.utf8))
                    #expect(Set(foundation.keys.map { Array($0.utf8) }) == Set(keys.map { Array($0.utf8) }), "\(text)")
                }
            }
        }
    }
}
