import Foundation
import StrataCloudWire
import StrataSync
import StrataSyncTestSupport
import Synchronization
import Testing

/// An outside tester's attack on `ZoneChangesResponse.head(of:)`: whatever a body holds, a head
/// is only ever read from a body that reads whole as a page (`CloudWire.decode`, what the client
/// reads the records with), and then it is that page's token and `moreComing`. Bodies are the
/// service's own pages, cut short, garbled byte by byte (seeded), with whitespace between every
/// pair of tokens, and with their keys reordered and repeated.
@Suite(.timeLimit(.minutes(3))) struct OutsideZonePageHeadTests {
    static let zone = CloudZoneID(name: "z\"}]", owner: "al\\ice")

    /// Names and text that a scanner could take for structure.
    static let awkward = [
        "\"", "\\", "}", "]", "\"}", "\\\"]", "{\"token\":{\"value\":\"x\"},\"moreComing\":false}", "\u{0}\u{1F}\u{7F}",
        "𝄞🎲", "\u{2028}\u{2029}", ",\"moreComing\":true", "",
    ]

    static func page(records: Int, tombstones: Int, moreComing: Bool, estimate: Int?, seed: Int) -> CloudZoneChanges {
        let version = HybridTimestamp(milliseconds: 1_700_000_000_000, counter: 1, node: "n\"}")
        let changed = (0..<records).map { index in
            let text = awkward[(seed + index) % awkward.count]
            return CloudRecord(
                id: CloudRecordID(name: "r\(index)\(text)", zone: zone), type: "t\(text)",
                fields: [
                    "text\(text)": .text(text), "max": .integer(.max), "min": .integer(.min), "nan": .real(.nan),
                    "inf": .real(.infinity), "ninf": .real(-.infinity), "empty": .bytes(Data()),
                    "binary": .bytes(Data([0, 0x22, 0x5C, 0x7D, 0x5D, 0xFF])), "null": .null,
                    "asset": .asset(CloudAssetReference(hash: String(repeating: "a1", count: 32), size: Int64(index))),
                ],
                fieldVersions: ["max": version], parent: index == 0 ? nil : CloudRecordID(name: "r0\(text)", zone: zone),
                changeTag: "tag\(text)")
        }
        let deleted = (0..<tombstones).map {
            CloudTombstone(id: CloudRecordID(name: "gone\($0)\(awkward[$0 % awkward.count])", zone: zone), type: "t\"]")
        }
        return CloudZoneChanges(
            changed: changed, deleted: deleted, token: CloudChangeToken("tok\(seed)\"}],\\"), moreComing: moreComing,
            remainingEstimate: estimate)
    }

    static let pages: [CloudZoneChanges] = [
        page(records: 0, tombstones: 0, moreComing: false, estimate: nil, seed: 0),
        page(records: 1, tombstones: 0, moreComing: true, estimate: 5, seed: 1),
        page(records: 0, tombstones: 2, moreComing: true, estimate: 0, seed: 2),
        page(records: 4, tombstones: 3, moreComing: false, estimate: nil, seed: 3),
        page(records: 12, tombstones: 1, moreComing: true, estimate: 99, seed: 4),
    ]

    /// Where ``check(_:_:allowsUnreadRecords:)`` sends what it finds: an issue each, or, for the
    /// garbling test, a tally.
    @TaskLocal static var report: @Sendable (String) -> Void = { Issue.record(Comment(rawValue: $0)) }

    /// The head of `body`, checked against reading it whole: a head only for a body that reads,
    /// and then the same token and `moreComing`. Answers whether a head was read.
    @discardableResult
    static func check(_ body: Data, _ what: @autoclosure () -> String, allowsUnreadRecords: Bool = false) -> Bool {
        let record = report
        guard let head = ZoneChangesResponse.head(of: body) else { return false }
        guard let whole = try? CloudWire.decode(ZoneChangesResponse.self, from: body) else {
            // Two kinds: a body that is not JSON at all (a fault of the head's own reading), and
            // JSON whose records or tombstones do not read as a page's.
            // The head checks the grammar of what it passes over, not its UTF-8 (by design:
            // the records' reader refuses invalid UTF-8 when `changes()` reads them).
            let validUTF8 = String(bytes: body, encoding: .utf8) != nil
            // Nor the range of numbers: `922e372036854775807` is JSON, which the records'
            // reader refuses as out of range (and `JSONSerialization` too, naming it so).
            var outOfRange = false
            var isObject = false
            do {
                isObject = try JSONSerialization.jsonObject(with: body) is [String: Any]
            } catch {
                outOfRange = "\((error as NSError).userInfo)".contains("is not representable")
            }
            if !isObject && ((validUTF8 && !outOfRange) || !allowsUnreadRecords) {
                record("a head (\(head.token), \(head.moreComing)) from a body that is not JSON: \(what()): \(show(body))")
            } else if !allowsUnreadRecords {
                record("a head (\(head.token), \(head.moreComing)) from JSON that does not read as a page: \(what()): \(show(body))")
            }
            return true
        }
        if whole.token != head.token || whole.moreComing != head.moreComing {
            record("head (\(head.token), \(head.moreComing)) ≠ page (\(whole.token), \(whole.moreComing)): \(what()): \(show(body))")
        }
        return true
    }

    static func show(_ body: Data) -> String {
        let text = String(decoding: body, as: UTF8.self)
        return text.count > 400 ? String(text.prefix(400)) + "…" : text
    }

    /// The byte ranges of `body` outside strings at which whitespace may go: after every
    /// structural character and before every one.
    static func gaps(in body: [UInt8]) -> [Int] {
        var gaps: [Int] = []
        var inString = false
        var escaped = false
        for (index, byte) in body.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    gaps.append(index + 1)
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                gaps.append(index)
                inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ","), UInt8(ascii: ":"):
                gaps.append(index)
                gaps.append(index + 1)
            default: break
            }
        }
        return Array(Set(gaps)).sorted()
    }

    @Test func theServiceFormReadsWithItsHead() throws {
        for page in Self.pages {
            let body = try CloudWire.encode(ZoneChangesResponse(page))
            #expect(Self.check(body, "as written"), "no head for a whole page: \(Self.show(body))")
            #expect(ZoneChangesResponse.head(of: body)?.token == page.token)
            // The oracle for "not JSON" reads the service's own bodies.
            #expect((try? JSONSerialization.jsonObject(with: body)) as? [String: Any] != nil)
        }
    }

    @Test func aBodyCutAnywhereHasNoHead() throws {
        for page in Self.pages {
            let body = try CloudWire.encode(ZoneChangesResponse(page))
            for length in 0..<body.count where ZoneChangesResponse.head(of: body.prefix(length)) != nil {
                Issue.record("a body cut to \(length) of \(body.count) bytes has a head: \(Self.show(body.prefix(length)))")
            }
            // Cut from the front, too.
            for start in 1..<body.count { Self.check(body.suffix(from: start), "cut from the front at \(start)") }
        }
    }

    /// Whitespace of every JSON kind between every pair of tokens: the same page, the same head.
    @Test func whitespaceAnywhereKeepsTheHead() throws {
        let spaces: [[UInt8]] = [[0x20], [0x0A], [0x09], [0x0D], [0x20, 0x0D, 0x0A, 0x09, 0x20]]
        for page in Self.pages {
            let body = Array(try CloudWire.encode(ZoneChangesResponse(page)))
            let gaps = Self.gaps(in: body)
            // Everywhere at once, each kind of whitespace, and at the body's ends.
            for space in spaces {
                var spaced: [UInt8] = space
                var last = 0
                for gap in gaps {
                    spaced += body[last..<gap] + space
                    last = gap
                }
                spaced += body[last...] + space
                let data = Data(spaced)
                if Self.check(data, "spaced everywhere") {
                    #expect(ZoneChangesResponse.head(of: data)?.token == page.token)
                } else {
                    Issue.record("no head for a valid page spaced with \(space): \(Self.show(data))")
                }
            }
            // At each gap alone.
            for gap in gaps {
                let data = Data(body[..<gap] + [0x0A, 0x20] + body[gap...])
                if !Self.check(data, "spaced at \(gap)") {
                    Issue.record("no head for a valid page spaced at \(gap): \(Self.show(data))")
                }
            }
        }
    }

    /// Single-byte replacements, insertions and deletions, and swapped spans, seeded.
    @Test(arguments: [1, 2, 3])
    func garbledBodiesNeverGiveAHeadTheyDoNotHave(seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        let interesting: [UInt8] = Array("\"\\{}[],: 0123456789-+.eEtruefalsn\u{7F}".utf8) + [0x00, 0x0A, 0x80, 0xC3, 0xFF]
        var heads = 0
        let found = Tally()
        for page in Self.pages {
            let body = Array(try CloudWire.encode(ZoneChangesResponse(page)))
            for round in 0..<1_500 {
                var mutated = body
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let position = Int.random(in: 0..<mutated.count, using: &random)
                    let byte = interesting.randomElement(using: &random)!
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0: mutated[position] = byte
                    case 1: mutated.insert(byte, at: position)
                    case 2: if mutated.count > 1 { mutated.remove(at: position) }
                    default:
                        let other = Int.random(in: 0..<mutated.count, using: &random)
                        mutated.swapAt(position, other)
                    }
                }
                // A garbled record that is still JSON is the records' reader's to refuse, when
                // `changes()` reads them: the head passes over records by design. Only a head
                // from a body that is not JSON at all counts here.
                let data = Data(mutated)
                let read = Self.$report.withValue({ message in found.add(message, data.count) }) {
                    Self.check(data, "seed \(seed) round \(round)", allowsUnreadRecords: true)
                }
                if read { heads += 1 }
            }
        }
        let tally = found.items.withLock { $0 }
        if !tally.isEmpty {
            let shortest = tally.sorted { $0.1 < $1.1 }.prefix(3).map(\.0)
            Issue.record("\(tally.count) garbled bodies gave a head they do not have; the shortest: \(shortest.joined(separator: "\n"))")
        }
        // Some garbled bodies still read (a changed digit in a name): the check ran on them.
        #expect(heads > 0)
    }

    /// The page's keys in every order, with and without the optional estimate, and each key
    /// repeated with another value.
    @Test func keysInEveryOrderOrRepeated() throws {
        func part(_ value: some Encodable) throws -> String { String(decoding: try CloudWire.encode(value), as: UTF8.self) }
        for page in Self.pages {
            var members = [
                ("changed", try part(page.changed)), ("deleted", try part(page.deleted)), ("token", try part(page.token)),
                ("moreComing", "\(page.moreComing)"),
            ]
            if let estimate = page.remainingEstimate { members.append(("remainingEstimate", "\(estimate)")) }
            for order in permutations(Array(members.indices)) {
                let text = "{" + order.map { "\"\(members[$0].0)\":\(members[$0].1)" }.joined(separator: ",") + "}"
                let data = Data(text.utf8)
                if Self.check(data, "order \(order)") {
                    #expect(ZoneChangesResponse.head(of: data)?.token == page.token)
                } else {
                    Issue.record("no head for a valid page with its keys in order \(order.map { members[$0].0 }): \(Self.show(data))")
                }
            }
            let others: [String: String] = [
                "changed": "[]", "deleted": "[]", "token": try part(CloudChangeToken("other")), "moreComing": "\(!page.moreComing)",
                "remainingEstimate": "7",
            ]
            for repeated in members.indices {
                for atEnd in [false, true] {
                    var parts = members.map { "\"\($0.0)\":\($0.1)" }
                    let extra = "\"\(members[repeated].0)\":\(others[members[repeated].0]!)"
                    if atEnd { parts.append(extra) } else { parts.insert(extra, at: 0) }
                    Self.check(Data(("{" + parts.joined(separator: ",") + "}").utf8), "\(members[repeated].0) repeated")
                    // The same key twice with the same value.
                    var same = members.map { "\"\($0.0)\":\($0.1)" }
                    same.append(same[repeated])
                    Self.check(Data(("{" + same.joined(separator: ",") + "}").utf8), "\(members[repeated].0) twice")
                }
            }
        }
    }

    @Test(arguments: [
        "", " ", "{}", "null", "[]",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true},",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":tru}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true,}",
        "{\"changed\":[,],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":1},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":\"a\",\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\",\"value\":\"b\"},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":1}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true,\"remainingEstimate\":-1}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\\q\"},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\\ud800\"},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\u{1}\"},\"moreComing\":true}",
        "{\"changed\":[\"\\\"],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "\u{FEFF}{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}\u{0}",
        "{'changed':[],'deleted':[],'token':{'value':'a'},'moreComing':true}",
    ])
    func bodiesThatAreNotPagesHaveNoHead(_ text: String) {
        Self.check(Data(text.utf8), "hand-written")
    }

    /// JSON whose members other than the head are missing or of the wrong kind: not a page.
    @Test(arguments: [
        "{\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":null,\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":{},\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true,\"remainingEstimate\":\"x\"}",
    ])
    func jsonThatIsNotAPageHasNoHead(_ text: String) {
        Self.check(Data(text.utf8), "hand-written")
    }

    /// A page whose records or tombstones are JSON of the wrong shape: the head passes over
    /// them by design (it is documented so), and reading the page whole refuses it, which is
    /// what `changes()` does before anything of it is used.
    @Test(arguments: [
        "{\"changed\":[1],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":[{}],\"deleted\":[],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
        "{\"changed\":[],\"deleted\":[{\"x\":1}],\"token\":{\"value\":\"a\"},\"moreComing\":true}",
    ])
    func recordsOfTheWrongShapeAreRefusedWhenRead(_ text: String) {
        #expect(ZoneChangesResponse.head(of: Data(text.utf8)) != nil)
        #expect((try? CloudWire.decode(ZoneChangesResponse.self, from: Data(text.utf8))) == nil)
    }
}

private func permutations(_ items: [Int]) -> [[Int]] {
    guard items.count > 1 else { return [items] }
    return items.indices.flatMap { index in
        var rest = items
        let first = rest.remove(at: index)
        return permutations(rest).map { [first] + $0 }
    }
}

private final class Tally: Sendable {
    let items = Mutex<[(String, Int)]>([])
    func add(_ message: String, _ size: Int) { items.withLock { $0.append((message, size)) } }
}
