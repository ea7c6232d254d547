import Foundation
import Testing

@testable import StrataCloud

/// A record read from a page keeps the text it arrived in (`ArrivedRecordText`), which a device
/// stores as the record's JSON instead of writing it again: that text must always read back as
/// the record carrying it, whatever the page's spacing and key order, and be forgotten the
/// moment the record changes.
@Suite(.timeLimit(.minutes(1)))
struct ArrivedRecordTextTests {
    /// The record `text` holds, read as a client reads a page's record; and the same read by
    /// `JSONDecoder`.
    static func readKeepingText(_ text: String) throws -> CloudRecord {
        var reader = JSONReader(text)
        let record = try CloudRecord(readingKeepingText: &reader)
        try reader.end()
        return record
    }

    /// Whether a record read from Strata's own JSON keeps its text: not when a key, or a
    /// version's node, holds a character JSON escapes (`json_extract` does not match escaped
    /// keys, and an escaped version is not spelled as its `description`).
    static func keepsText(_ record: CloudRecord) -> Bool {
        func escaped(_ text: String) -> Bool { text.utf8.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } }
        return !record.fields.keys.contains(where: escaped) && !record.fieldVersions.keys.contains(where: escaped)
            && !record.fieldVersions.values.contains { escaped($0.node) }
    }

    /// Checks that `record`'s kept text, and the versions and fields cut from it, read back as
    /// the record, its versions and its fields, by the fast reader and by `JSONDecoder`.
    static func expectTextReadsBack(_ record: CloudRecord, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let arrived = try #require(record.arrivedText, sourceLocation: sourceLocation)
        #expect(try FastJSON.read(CloudRecord.self, from: arrived.text) == record, "\(arrived.text)", sourceLocation: sourceLocation)
        #expect(
            try FastJSONTests.decoder().decode(CloudRecord.self, from: Data(arrived.text.utf8)) == record, sourceLocation: sourceLocation)
        #expect(FastJSON.versions(from: arrived.versionsText) == record.fieldVersions, "\(arrived.text)", sourceLocation: sourceLocation)
        let fields = String(decoding: Array(arrived.text.utf8)[arrived.fields], as: UTF8.self)
        #expect(FastJSON.fields(from: fields) == record.fields, "\(arrived.text)", sourceLocation: sourceLocation)
    }

    /// The wire's spellings of one record: as Strata writes it; spaced after every `:` and `,`
    /// and around the value, as PostgreSQL writes a `jsonb` value out; and with its keys in
    /// another order, the fields before the versions, and `null` written for absent optionals.
    static func spellings(of record: CloudRecord) throws -> [String] {
        let compact = try FastJSON.text(of: record)
        var versions = JSONWriter()
        versions.versions(record.fieldVersions)
        let fields = FastJSON.text(ofFields: record.fields)
        let id = try FastJSON.text(of: record.id)
        let parent = try record.parent.map { try FastJSON.text(of: $0) } ?? "null"
        var type = JSONWriter()
        type.string(record.type)
        var tag = JSONWriter()
        if let changeTag = record.changeTag { tag.string(changeTag) } else { tag.raw("null") }
        let reordered =
            "{\"type\":\(type.text),\"fields\":\(fields),\"id\":\(id),\"parent\":\(parent),\"changeTag\":\(tag.text),"
            + "\"fieldVersions\":\(versions.text)}"
        return [compact, spaced(compact), " \n\t" + spaced(reordered) + " \r\n", reordered]
    }

    /// `text` with a space after every `:` and `,` outside strings, as `jsonb_out` writes.
    static func spaced(_ text: String) -> String {
        var result: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in text.utf8 {
            result.append(byte)
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: ":") || byte == UInt8(ascii: ",") {
                result.append(UInt8(ascii: " "))
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    @Test func aRecordReadKeepingItsTextReadsBackAsItselfInEverySpelling() throws {
        var random = SplitMix(seed: 20_261_207)
        for _ in 0..<1_000 {
            let record = FastJSONTests.record(&random)
            for text in try Self.spellings(of: record) {
                let read = try Self.readKeepingText(text)
                #expect(read == record, "\(text)")
                guard Self.keepsText(record) else {
                    #expect(read.arrivedText == nil, "\(text)")
                    continue
                }
                try Self.expectTextReadsBack(read)
                #expect(read.arrivedText?.text == text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
        }
    }

    @Test func recordsInAnArrayKeepOnlyTheirOwnText() throws {
        var random = SplitMix(seed: 11)
        let records = (0..<50).map { _ in FastJSONTests.record(&random) }
        let text = try " [ " + records.map { try Self.spaced(FastJSON.text(of: $0)) }.joined(separator: " ,\n ") + " ] "
        var reader = JSONReader(text)
        let read = try reader.array { reader throws(JSONReaderError) in try CloudRecord(readingKeepingText: &reader) }
        try reader.end()
        #expect(read == records)
        #expect(read.contains { $0.arrivedText != nil })
        for record in read {
            if Self.keepsText(record) { try Self.expectTextReadsBack(record) } else { #expect(record.arrivedText == nil) }
        }
    }

    @Test func theServicesReaderKeepsNoText() throws {
        var random = SplitMix(seed: 3)
        let record = FastJSONTests.record(&random)
        #expect(try FastJSON.read(CloudRecord.self, from: FastJSON.text(of: record)).arrivedText == nil)
        #expect(record.arrivedText == nil)
    }

    /// Every way of changing a record forgets its text, even setting a property to the value it
    /// had: the text is kept only while nothing could have made it stale.
    @Test(arguments: 0..<9) func anyChangeForgetsTheText(_ change: Int) throws {
        var random = SplitMix(seed: 5)
        var original = FastJSONTests.record(&random)
        while !Self.keepsText(original) { original = FastJSONTests.record(&random) }
        original.fields["score"] = .integer(3)
        original.fieldVersions["score"] = HybridTimestamp(milliseconds: 1, counter: 0, node: "a")
        var record = try Self.readKeepingText(FastJSON.text(of: original))
        #expect(record.arrivedText != nil)
        switch change {
        case 0: record.id = CloudRecordID(name: "other", zone: record.id.zone)
        case 1:
            let same = record.type
            record.type = same
        case 2: record.fields["score"] = .integer(4)
        case 3: record.fields.removeAll()
        case 4: record.fieldVersions["score"] = HybridTimestamp(milliseconds: 2, counter: 0, node: "a")
        case 5: record.parent = nil
        case 6: record.changeTag = "new"
        case 7: record.id.name += "x"
        default:
            let same = record.fields
            record.fields = same
        }
        #expect(record.arrivedText == nil)
    }

    /// The text is not part of the record's value: records equal with and without it, hash
    /// alike, and encode to the same JSON, which decodes without one.
    @Test func theTextIsNotPartOfTheValue() throws {
        var random = SplitMix(seed: 17)
        for _ in 0..<200 {
            let record = FastJSONTests.record(&random)
            let read = try Self.readKeepingText(Self.spaced(FastJSON.text(of: record)))
            #expect((read.arrivedText != nil) == Self.keepsText(record))
            #expect(read == record)
            #expect(read.hashValue == record.hashValue)
            #expect(Set([read, record]).count == 1)
            let encoded = try FastJSONTests.encoder().encode(read)
            #expect(encoded == (try FastJSONTests.encoder().encode(record)))
            #expect(try FastJSONTests.decoder().decode(CloudRecord.self, from: encoded).arrivedText == nil)
        }
    }

    /// Opening a sealed record puts its fields where the envelope was: the spliced text reads
    /// back as the opened record, whether the versions came before the fields or after them,
    /// and however the new fields' text is spaced.
    @Test func replacingTheFieldsKeepsTheVersionsWhereverTheyAre() throws {
        var random = SplitMix(seed: 29)
        for _ in 0..<500 {
            var sealed = FastJSONTests.record(&random)
            sealed.fields = ["strata.sealed": .bytes(Data((0..<Int.random(in: 0..<90, using: &random)).map { UInt8($0) }))]
            let opened = FastJSONTests.record(&random).fields
            guard Self.keepsText(sealed) else { continue }
            for text in try Self.spellings(of: sealed) {
                let read = try Self.readKeepingText(text)
                for openedText in [FastJSON.text(ofFields: opened), Self.spaced(FastJSON.text(ofFields: opened))] {
                    let arrived = try #require(read.arrivedText).replacingFields(with: openedText)
                    var expected = sealed
                    expected.fields = opened
                    expected.arrivedText = arrived
                    try Self.expectTextReadsBack(expected)
                }
            }
        }
    }
}
