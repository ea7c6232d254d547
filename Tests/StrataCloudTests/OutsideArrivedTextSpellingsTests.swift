// Spellings the commit's tests do not generate (they only vary spacing and key order): escapes
// in keys, in the record's own keys and in timestamps, surrogate pairs, `\/`, exponents,
// leading zeros, `{ }`, whitespace before `:`; and a splice (`replacingFields`) behind
// multi-byte text, with the opened fields padded and multi-byte, versions before or after.
import Foundation
import Testing

@testable import StrataCloud

@Suite(.timeLimit(.minutes(1)))
struct OutsideArrivedTextSpellingsTests {
    static let zone = CloudZoneID(name: "z", owner: "é")

    static func read(_ text: String) throws -> CloudRecord {
        var reader = JSONReader(text)
        let record = try CloudRecord(readingKeepingText: &reader)
        try reader.end()
        return record
    }

    /// The kept text, its versions and its fields read back as `record`, by both readers.
    static func expectReadsBack(_ record: CloudRecord, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let arrived = try #require(record.arrivedText, sourceLocation: sourceLocation)
        #expect(try FastJSON.read(CloudRecord.self, from: arrived.text) == record, "\(arrived.text)", sourceLocation: sourceLocation)
        #expect(
            try FastJSONTests.decoder().decode(CloudRecord.self, from: Data(arrived.text.utf8)) == record, "\(arrived.text)",
            sourceLocation: sourceLocation)
        let bytes = Array(arrived.text.utf8)
        // Both ranges are objects: they start and end on a brace, whatever precedes them.
        #expect(
            bytes[arrived.versions].first == UInt8(ascii: "{") && bytes[arrived.versions].last == UInt8(ascii: "}"),
            sourceLocation: sourceLocation)
        #expect(FastJSON.versions(from: arrived.versionsText) == record.fieldVersions, sourceLocation: sourceLocation)
        let fields = String(decoding: bytes[arrived.fields], as: UTF8.self)
        #expect(FastJSON.fields(from: fields) == record.fields, "\(fields)", sourceLocation: sourceLocation)
    }

    static let expected = CloudRecord(
        id: CloudRecordID(name: "r1", zone: zone), type: "t😀",
        fields: [
            "title": .text("😀 é / \"q\" \u{0}"), "a/b": .real(100), "r": .real(-0.0), "e": .null,
            "n": .integer(-12), "big": .real(1.5e300),
        ],
        fieldVersions: [
            "title": HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 0, node: "né"),
            "a/b": HybridTimestamp(milliseconds: 1, counter: 0, node: "x"),
        ])

    static let awkward =
        #"  { "field\u0056ersions" : { "ti\u0074le" : "0001700000000000.000@n\u00e9" , "a\/b" : "1.0@x" } ,"#
        + #" "fields" : { "ti\u0074le" : { "text" : { "_0" : "\ud83d\ude00 \u00e9 \/ \"q\" \u0000" } } ,"#
        + #" "a\/b" : { "real" : { "_0" : 1.0E+2 } } , "r" : { "real" : { "_0" : -0.0 } } , "e" : { "null" : { } } ,"#
        + #" "n" : { "integer" : { "_0" : -12 } } , "big" : { "real" : { "_0" : 15e299 } } } ,"#
        + #" "id" : { "zone" : { "owner" : "\u00e9" , "name" : "z" } , "name" : "r\u0031" } ,"#
        + #" "parent" : null , "changeTag" : null , "type" : "t\ud83d\ude00" }  "#

    /// Unusual values and spacing, with keys and versions as Strata spells them: the text is
    /// kept and reads back.
    static let unusualValues =
        #"  { "fieldVersions" : { "title" : "1700000000000.0@né" , "a/b" : "1.0@x" } ,"#
        + #" "fields" : { "title" : { "text" : { "_0" : "\ud83d\ude00 \u00e9 \/ \"q\" \u0000" } } ,"#
        + #" "a/b" : { "real" : { "_0" : 1.0E+2 } } , "r" : { "real" : { "_0" : -0.0 } } , "e" : { "null" : { } } ,"#
        + #" "n" : { "integer" : { "_0" : -12 } } , "big" : { "real" : { "_0" : 15e299 } } } ,"#
        + #" "id" : { "zone" : { "owner" : "\u00e9" , "name" : "z" } , "name" : "r\u0031" } ,"#
        + #" "parent" : null , "changeTag" : null , "type" : "t\ud83d\ude00" }  "#

    @Test func unusualValuesAndSpacingReadBackAsTheRecord() throws {
        let read = try Self.read(Self.unusualValues)
        #expect(read == Self.expected)
        try Self.expectReadsBack(read)
        #expect(read.arrivedText?.text == Self.unusualValues.trimmingCharacters(in: .whitespaces))
    }

    /// Escaped keys and versions with leading zeros read as the same record, but are not kept:
    /// `json_extract` would not find the keys, and would read the versions' other spelling.
    @Test func escapedKeysAndPaddedVersionsReadAsTheRecordButKeepNoText() throws {
        let read = try Self.read(Self.awkward)
        #expect(read == Self.expected)
        #expect(read.arrivedText == nil)
        let oneEscapedKey = Self.unusualValues.replacingOccurrences(of: #""big""#, with: #""bi\u0067""#)
        #expect(try Self.read(oneEscapedKey) == Self.expected)
        #expect(try Self.read(oneEscapedKey).arrivedText == nil)
        for padded in ["01.0@x", "1.00@x", #"1.0@\u0078"#] {
            let text = Self.unusualValues.replacingOccurrences(of: #""1.0@x""#, with: "\"\(padded)\"")
            #expect(try Self.read(text) == Self.expected, "\(padded)")
            #expect(try Self.read(text).arrivedText == nil, "\(padded)")
        }
        var negativeZero = Self.expected
        negativeZero.fieldVersions["a/b"] = HybridTimestamp(milliseconds: 0, counter: 0, node: "x")
        let text = Self.unusualValues.replacingOccurrences(of: #""1.0@x""#, with: #""-0.0@x""#)
        #expect(try Self.read(text) == negativeZero)
        #expect(try Self.read(text).arrivedText == nil)
    }

    /// Opening in place behind multi-byte text: the versions' range moves by the byte-length
    /// difference (not the character one), and the spliced text still reads back.
    @Test(arguments: [false, true])
    func replacingFieldsBehindMultiByteTextKeepsByteRanges(versionsFirst: Bool) throws {
        let id = #""id":{"name":"r\u00e9😀","zone":{"name":"z😀","owner":"é"}}"#
        let versions = #""fieldVersions":{"k😀":"1.0@é😀","é":"2.0@x"}"#
        let sealed = #""fields":{"strata.sealed":{"bytes":{"_0":"AAECAwQF"}}}"#
        let middle = versionsFirst ? "\(versions) , \(sealed)" : "\(sealed) ,\n\(versions)"
        let text = #"{"type":"t\u00e9😀😀", "#.appending(id).appending(" ,").appending(middle).appending(#", "parent":null}"#)
        let read = try Self.read(text)
        let opened = " \n{\"k😀\" : {\"text\":{\"_0\":\"vé😀\"}}, \"é\": {\"bytes\": {\"_0\": \"AQI=\"}}}\t "
        let arrived = try #require(read.arrivedText).replacingFields(with: opened)
        var expected = read
        expected.fields = ["k😀": .text("vé😀"), "é": .bytes(Data([1, 2]))]
        expected.arrivedText = arrived
        #expect(try FastJSON.read(CloudRecord.self, from: arrived.text) == expected, "\(arrived.text)")
        #expect(FastJSON.versions(from: arrived.versionsText) == read.fieldVersions, "\(arrived.versionsText)")
        let bytes = Array(arrived.text.utf8)
        #expect(bytes[arrived.versions].first == UInt8(ascii: "{") && bytes[arrived.versions].last == UInt8(ascii: "}"))
        #expect(FastJSON.fields(from: String(decoding: bytes[arrived.fields], as: UTF8.self)) == expected.fields)
        // Opening twice (a page re-read) lands on the same text.
        #expect(arrived.replacingFields(with: opened).text == arrived.text)
    }
}
