import Foundation
import Testing

@testable import StrataCloud

/// The reader walks a string eight bytes at a time until a word holds a quote, a backslash, a
/// control character or a byte beyond ASCII, then byte by byte. Every such byte at every offset
/// from a word's start, in strings of every length around the word size, must read as
/// `JSONDecoder` reads it (or be refused by both), and `plainString()` must stop at the same
/// place `string()` does.
@Suite(.timeLimit(.minutes(1)))
struct JSONStringScanTests {
    /// What goes at the probed offset: raw bytes as they stand in the JSON text.
    static let specials: [(name: String, bytes: [UInt8])] = [
        ("an escaped quote", Array(#"\""#.utf8)),
        ("an escaped backslash", Array(#"\\"#.utf8)),
        ("a newline escape", Array(#"\n"#.utf8)),
        ("a unicode escape", Array(#"\u00e9"#.utf8)),
        ("a raw control character", [0x01]),
        ("a raw 0x1F", [0x1F]),
        ("a raw tab", [0x09]),
        ("a raw space", [0x20]),
        ("DEL", [0x7F]),
        ("the last byte before a quote", [0x21]),
        ("the byte after a quote", [0x23]),
        ("the byte before a backslash", [0x5B]),
        ("the byte after a backslash", [0x5D]),
        ("é", Array("é".utf8)),
        ("😀", Array("😀".utf8)),
        ("an invalid lead byte", [0xFF]),
        ("a lone continuation byte", [0x80]),
        ("a truncated two-byte sequence", [0xC3]),
        ("an unterminated end", []),
    ]

    static func body(_ special: [UInt8], at offset: Int, length: Int) -> [UInt8] {
        var bytes = (0..<length).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        bytes.insert(contentsOf: special, at: min(offset, bytes.count))
        return bytes
    }

    @Test(arguments: specials.indices)
    func everySpecialByteAtEveryOffsetReadsAsJSONDecoderReadsIt(_ special: Int) throws {
        let (name, inserted) = Self.specials[special]
        for length in 0...26 {
            for offset in 0...min(length, 18) {
                let body = Self.body(inserted, at: offset, length: length)
                // An unterminated string: the text just ends inside it.
                let closing: [UInt8] = inserted.isEmpty && offset == length ? [] : Array(#""}}"#.utf8)
                let text = Array(#"{"text":{"_0":""#.utf8) + body + closing
                let data = Data(text)
                let foundation = try? FastJSONTests.decoder().decode(CloudValue.self, from: data)
                var reader = JSONReader(data)
                let fast = try? CloudValue(reading: &reader)
                if let fast {
                    #expect(fast == foundation, "\(name) at \(offset) of \(length): \(Array(body))")
                } else if inserted.isEmpty == false, ![0x01, 0x1F, 0x09, 0xFF, 0x80, 0xC3].contains(inserted.first ?? 0) {
                    // Only raw control characters, invalid UTF-8 and an unterminated string are
                    // refused: everything else here is a valid string.
                    Issue.record("the fast reader refused \(name) at \(offset) of \(length)")
                }
                if foundation == nil { #expect(fast == nil, "\(name) at \(offset) of \(length): accepted what JSONDecoder refuses") }
            }
        }
    }

    /// `plainString()` takes a string without escapes whole and leaves one with an escape
    /// unread (the reader where it was), at every offset of the escape.
    @Test func aPlainStringEndsWhereTheStringEnds() throws {
        for length in 0...26 {
            for offset in 0...length {
                let plain = Self.body([], at: 0, length: length)
                var reader = JSONReader(Data(#""\#(String(decoding: plain, as: UTF8.self))""#.utf8))
                let range = try #require(try reader.plainString())
                #expect(try reader.text(range) == String(decoding: plain, as: UTF8.self))
                #expect(reader.consumedCount == length + 2)

                let escaped = Self.body(Array(#"\/"#.utf8), at: offset, length: length)
                var escapedReader = JSONReader(Data([UInt8(ascii: "\"")] + escaped + [UInt8(ascii: "\"")]))
                #expect(try escapedReader.plainString() == nil)
                #expect(escapedReader.consumedCount == 0)
                #expect(
                    try escapedReader.string() == String(decoding: Self.body(Array("/".utf8), at: offset, length: length), as: UTF8.self))
            }
        }
    }

    /// A record's versions spelled otherwise than Strata writes them keep no text, also when
    /// the odd spelling repeats (the versions after the first of one spelling are not checked
    /// again, as they are the same bytes) or follows a canonical one.
    @Test(arguments: [
        (#"{"a":"01.0@n","b":"01.0@n"}"#, false),
        (#"{"a":"1.0@n","b":"01.0@n"}"#, false),
        (#"{"a":"01.0@n","b":"1.0@n"}"#, false),
        (#"{"a":"1.0@n","b":"1.0@n","c":"1.00@n"}"#, false),
        (#"{"a":"1.0@n","b":"1.0@n","c":"1.0@n"}"#, true),
        (#"{"a":"1.0@n","b":"2.0@n","c":"1.0@n"}"#, true),
        // An escaped version is read apart from the last plain one, which stays the one a
        // repeat is compared with: the escape must still count.
        (#"{"a":"1700.0@né","b":"1.0@\u0078"}"#, false),
        (#"{"a":"1.0@x","b":"1.0@\u0078","c":"1.0@x"}"#, false),
    ])
    func oddlySpelledVersionsKeepNoText(versions: String, keepsText: Bool) throws {
        let text = #"{"fieldVersions":\#(versions),"fields":{},"id":{"name":"r","zone":{"name":"z","owner":"o"}},"type":"t"}"#
        var reader = JSONReader(Data(text.utf8))
        let record = try CloudRecord(readingKeepingText: &reader)
        #expect((record.arrivedText != nil) == keepsText, "\(versions)")
    }
}
