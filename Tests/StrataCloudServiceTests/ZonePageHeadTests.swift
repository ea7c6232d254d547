import Foundation
import StrataCloudWire
import StrataSync
import Testing

/// What a page's body says of the next page (its token, whether more come), read while only
/// passing over its records: it agrees with reading the body whole, whatever the records hold
/// and however the body is laid out, and a body cut short is never read as a page.
@Suite(.timeLimit(.minutes(1))) struct ZonePageHeadTests {
    static let zone = CloudZoneID(name: "z", owner: "alice")

    /// Text that a structural scan could mistake for structure: quotes, backslashes, brackets
    /// and commas inside strings, escapes of every kind, non-ASCII.
    static let awkward = [
        "", "\"", "\\", "\\\"", "\"\\", "}", "]", "{[", "a,b", "\"},{\"", "\u{1}\u{1F}", "é🎲", "\\\\\"]}", "{\"token\":1}",
    ]

    static func page(_ seed: Int, records: Int, tombstones: Int, moreComing: Bool) -> CloudZoneChanges {
        let version = HybridTimestamp(milliseconds: 1_700_000_000_000 + Int64(seed), counter: 0, node: "n\\\"]")
        let changed = (0..<records).map { index in
            let text = awkward[(seed + index) % awkward.count]
            return CloudRecord(
                id: CloudRecordID(name: "r\(index)\(text)", zone: zone), type: "t\(text)",
                fields: [
                    "text": .text(text), "number": .integer(Int64(index) - 3), "real": .real(index % 2 == 0 ? .nan : -0.5),
                    "bytes": .bytes(Data(text.utf8)), "nothing": .null,
                    "asset": .asset(CloudAssetReference(hash: String(repeating: "0f", count: 32), size: 7)),
                ],
                fieldVersions: ["text": version, "number": version], parent: index == 0 ? nil : CloudRecordID(name: "r0", zone: zone),
                changeTag: "tag\(text)")
        }
        let deleted = (0..<tombstones).map { CloudTombstone(id: CloudRecordID(name: "gone\($0)\\\"", zone: zone), type: "t]") }
        // Planned starts (issue #27) on some pages: none, one, and several with awkward text.
        let following =
            moreComing ? (0..<(seed % 3 == 0 ? 0 : seed)).map { CloudChangeToken("z:\(seed + $0):\(awkward[$0 % awkward.count])") } : []
        return CloudZoneChanges(
            changed: changed, deleted: deleted, token: CloudChangeToken("z:\(seed):\"}]"), moreComing: moreComing,
            remainingEstimate: moreComing ? seed + 1 : 0, followingTokens: following)
    }

    static var pages: [CloudZoneChanges] {
        [
            page(0, records: 0, tombstones: 0, moreComing: false), page(1, records: 1, tombstones: 0, moreComing: true),
            page(2, records: 0, tombstones: 3, moreComing: true), page(3, records: 14, tombstones: 2, moreComing: false),
            page(4, records: 30, tombstones: 1, moreComing: true),
        ]
    }

    /// The body laid out three ways: as the service writes it, pretty-printed by
    /// `JSONEncoder`, and with its keys in the opposite order.
    static func bodies(of page: CloudZoneChanges) throws -> [Data] {
        let response = ZoneChangesResponse(page)
        let compact = try CloudWire.encode(response)
        let encoder = CloudWire.makeEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let pretty = try encoder.encode(response)
        func part(_ value: some Encodable) throws -> String { String(decoding: try CloudWire.encode(value), as: UTF8.self) }
        var reversed = "{ "
        if !page.followingTokens.isEmpty { reversed += "\"followingTokens\": \(try part(page.followingTokens)), " }
        reversed += "\"token\" : \(try part(page.token)) , \"moreComing\" : \(page.moreComing)"
        if let estimate = page.remainingEstimate { reversed += ", \"remainingEstimate\": \(estimate)" }
        reversed += ",\"deleted\":\(try part(page.deleted)),\n\"changed\":\t\(try part(page.changed)) }"
        return [compact, pretty, Data(reversed.utf8)]
    }

    @Test func theHeadAgreesWithTheWholeBody() throws {
        for page in Self.pages {
            for body in try Self.bodies(of: page) {
                let whole = try CloudWire.decode(ZoneChangesResponse.self, from: body)
                let head = try #require(ZoneChangesResponse.head(of: body), "\(String(decoding: body.prefix(200), as: UTF8.self))")
                #expect(head.token == whole.token)
                #expect(head.moreComing == whole.moreComing)
                #expect(head.token == page.token)
                #expect(head.followingTokens == (whole.followingTokens ?? []))
                #expect(head.followingTokens == page.followingTokens)
            }
        }
    }

    /// Cut anywhere, a body has no head: the next page is never asked for from a page that
    /// did not arrive whole.
    @Test func aBodyCutShortHasNoHead() throws {
        for page in [Self.page(5, records: 3, tombstones: 2, moreComing: true)] {
            for body in try Self.bodies(of: page) {
                for length in 0..<body.count where ZoneChangesResponse.head(of: body.prefix(length)) != nil {
                    Issue.record("a body cut to \(length) of \(body.count) bytes was read")
                }
            }
        }
    }

    @Test(arguments: [
        #"{"changed":[],"deleted":[],"moreComing":true}"#,
        #"{"changed":[],"deleted":[],"token":{"value":"a"}}"#,
        #"{"changed":[],"deleted":[],"moreComing":true,"token":{"value":"a"},"token":{"value":"b"}}"#,
        #"{"changed":[],"deleted":[],"moreComing":true,"token":{"value":"a"},"extra":1}"#,
        #"{"changed":[],"deleted":[],"moreComing":"yes","token":{"value":"a"}}"#,
        #"{"changed":[],"deleted":[],"moreComing":true,"token":{"value":"a"}} trailing"#,
        #"{"changed":[}],"deleted":[],"moreComing":true,"token":{"value":"a"}}"#,
        #"{"changed":["unterminated],"deleted":[],"moreComing":true,"token":{"value":"a"}}"#,
        #"[{"changed":[],"deleted":[],"moreComing":true,"token":{"value":"a"}}]"#,
        #"{"changed":[],"deleted":[],"moreComing":true,"token":{"value":"a"},"followingTokens":[{"value":1}]}"#,
        #"{"changed":[],"deleted":[],"moreComing":true,"token":{"value":"a"},"followingTokens":{"value":"b"}}"#,
        #"{"changed":[],"deleted":[],"moreComing":true,"token":{"value":"a"},"followingTokens":[],"followingTokens":[]}"#,
    ])
    func aBodyThatIsNotAPageHasNoHead(_ text: String) {
        #expect(ZoneChangesResponse.head(of: Data(text.utf8)) == nil)
    }
}
