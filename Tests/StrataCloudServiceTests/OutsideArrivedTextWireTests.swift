// A client's whole-body reads (CloudWire.decode, as CloudServiceTransport.decoded reads a page):
// every record of a zone page and of a database response's first pages keeps its own text, and
// a body only `JSONDecoder` reads (the Codable fallback) keeps none.
import Foundation
import StrataCloudWire
import StrataSync
import Testing

@Suite(.timeLimit(.minutes(1)))
struct OutsideArrivedTextWireTests {
    static let zone = CloudZoneID(name: "z", owner: "alice")

    static func page(_ count: Int) -> CloudZoneChanges {
        let version = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 2, node: "dé😀 q")
        var changed: [CloudRecord] = []
        for index in 0..<count {
            let fields: [String: CloudValue] = [
                "text": .text("v\(index) 😀 \"}],{\" a/b"), "n": .integer(Int64(index)), "b": .bytes(Data([UInt8(index)])),
            ]
            let parent: CloudRecordID? = index == 0 ? nil : CloudRecordID(name: "r0é", zone: zone)
            let tag: String? = index % 2 == 0 ? "tag\(index)" : nil
            changed.append(
                CloudRecord(
                    id: CloudRecordID(name: "r\(index)é", zone: zone), type: "t", fields: fields,
                    fieldVersions: ["text": version, "n": version], parent: parent, changeTag: tag))
        }
        return CloudZoneChanges(
            changed: changed, deleted: [CloudTombstone(id: CloudRecordID(name: "gone", zone: zone), type: "t")],
            token: CloudChangeToken("next"), moreComing: false, remainingEstimate: 0)
    }

    static func expectOwnText(_ records: [CloudRecord], sourceLocation: SourceLocation = #_sourceLocation) throws {
        for record in records {
            let arrived = try #require(record.arrivedText, sourceLocation: sourceLocation)
            #expect(try FastJSON.read(CloudRecord.self, from: arrived.text) == record, "\(arrived.text)", sourceLocation: sourceLocation)
            #expect(FastJSON.versions(from: arrived.versionsText) == record.fieldVersions, sourceLocation: sourceLocation)
        }
        // Each its own: no two records share one text.
        #expect(Set(records.compactMap { $0.arrivedText?.text }).count == records.count, sourceLocation: sourceLocation)
    }

    @Test func eachRecordOfAZonePageKeepsItsOwnText() throws {
        let page = Self.page(7)
        let body = try CloudWire.encode(ZoneChangesResponse(page))
        let pretty = CloudWire.makeEncoder()
        pretty.outputFormatting = [.prettyPrinted, .sortedKeys]
        for data in [body, try pretty.encode(ZoneChangesResponse(page))] {
            let read = try CloudWire.decode(ZoneChangesResponse.self, from: data).changes
            #expect(read.changed == page.changed)
            try Self.expectOwnText(read.changed)
        }
    }

    @Test func firstPagesOfADatabaseResponseKeepTheirText() throws {
        let other = CloudZoneID(name: "y", owner: "alice")
        let changes = CloudDatabaseChanges(
            changedZones: [Self.zone, other], deletedZones: [], token: CloudChangeToken("db"),
            firstPages: [Self.zone: Self.page(3), other: Self.page(2)])
        let body = try CloudWire.encode(DatabaseChangesResponse(changes))
        let read = try CloudWire.decode(DatabaseChangesResponse.self, from: body).changes
        #expect(read.firstPages.count == 2)
        for (zone, page) in read.firstPages {
            #expect(page.changed == changes.firstPages[zone]?.changed)
            try Self.expectOwnText(page.changed)
        }
    }

    /// A record key the fast reader does not know sends the whole body to `JSONDecoder`, which
    /// ignores it: the page still reads, and its records carry no text (the engine writes theirs).
    @Test func aBodyOnlyJSONDecoderReadsKeepsNoText() throws {
        let page = Self.page(3)
        let body = String(decoding: try CloudWire.encode(ZoneChangesResponse(page)), as: UTF8.self)
        // `,"` never occurs inside a JSON string (a quote there is escaped): this edits keys only.
        let extended = body.replacingOccurrences(of: ",\"type\":\"t\"}", with: ",\"type\":\"t\",\"extra\":1}")
        #expect(extended != body)
        let read = try CloudWire.decode(ZoneChangesResponse.self, from: Data(extended.utf8)).changes
        #expect(read.changed == page.changed)
        #expect(read.changed.allSatisfy { $0.arrivedText == nil })
    }
}
