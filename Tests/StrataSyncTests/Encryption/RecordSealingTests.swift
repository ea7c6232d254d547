import Crypto
import Foundation
import Testing

@testable import StrataSync

/// A sealed record opens to what was sealed, and to nothing else: every byte of the envelope
/// and every readable part the envelope is bound to is checked.
@Suite(.timeLimit(.minutes(2))) struct RecordSealingTests {
    typealias F = EncryptionFixtures
    let key = ZoneKey.random(version: 3)

    @Test func everyKindOfValueRoundTrips() throws {
        let record = F.record(fields: F.everyKind)
        let sealed = try RecordSealing.seal(record, with: key)
        let opened = try RecordSealing.open(sealed, with: key)
        #expect(F.same(opened.fields, record.fields))
        for (name, value) in record.fields {
            #expect(opened.fields[name].map { F.same($0, value) } == true, "field \(name)")
        }
        if case .real(let zero) = opened.fields["realMinusZero"] {
            #expect(zero.sign == .minus)
        } else {
            Issue.record("-0.0 did not come back as a real")
        }
        #expect(opened.id == record.id && opened.type == record.type && opened.parent == record.parent)
        #expect(opened.fieldVersions == record.fieldVersions && opened.changeTag == record.changeTag)
    }

    /// A sealed record read from a page keeps its text through opening, with the opened
    /// fields in place of the envelope (what a device stores as the record's JSON): the text
    /// reads back as the opened record, its versions cut from it as the record's versions. A
    /// record that did not arrive in a page has no text to keep.
    @Test func openingARecordFromAPageKeepsItsTextWithTheOpenedFields() throws {
        // Keys JSON must escape are never kept (`CloudRecord.init(readingKeepingText:)`).
        let plainKeys = F.everyKind.filter { !$0.key.utf8.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 } }
        #expect(plainKeys.count == F.everyKind.count - 1)
        let record = F.record(fields: plainKeys)
        let sealed = try RecordSealing.seal(record, with: key)
        #expect(try RecordSealing.open(sealed, with: key).arrivedText == nil)
        let wire = try FastJSON.text(of: sealed)
        // As PostgreSQL writes a stored record out: spaces after the separators (none of the
        // record's strings holds a quote followed by a `:` or a `,`, nor does base64).
        let spaced = wire.replacingOccurrences(of: "\":", with: "\": ").replacingOccurrences(of: ",\"", with: ", \"")
        for text in [wire, spaced] {
            var reader = JSONReader(text)
            let arrived = try CloudRecord(readingKeepingText: &reader)
            let opened = try RecordSealing.open(arrived, with: key)
            let kept = try #require(opened.arrivedText)
            let readBack = try FastJSON.read(CloudRecord.self, from: kept.text)
            #expect(F.same(readBack.fields, record.fields))
            #expect(readBack.fieldVersions == record.fieldVersions && readBack.id == record.id && readBack.type == record.type)
            #expect(readBack.parent == record.parent && readBack.changeTag == record.changeTag)
            #expect(FastJSON.versions(from: kept.versionsText) == record.fieldVersions)
        }
    }

    /// An envelope whose fields' JSON spells a key with an escape opens to the same fields, but
    /// keeps no text: `json_extract` would not find that key in it.
    @Test func openingFieldsWithAnEscapedKeyKeepsNoText() throws {
        var record = F.record(fields: F.everyKind)
        record.fieldVersions = ["realPi": F.timestamp(1)]
        let sealed = try RecordSealing.seal(record, with: key)
        var reader = JSONReader(try FastJSON.text(of: sealed))
        let arrived = try CloudRecord(readingKeepingText: &reader)
        #expect(arrived.arrivedText != nil)
        let opened = try RecordSealing.open(arrived, with: key)
        #expect(F.same(opened.fields, record.fields))
        #expect(opened.arrivedText == nil)
    }

    @Test func eachValueAloneRoundTrips() throws {
        for (name, value) in F.everyKind {
            let record = F.record(fields: [name: value])
            let opened = try RecordSealing.open(try RecordSealing.seal(record, with: key), with: key)
            #expect(F.same(opened.fields, record.fields), "field \(name)")
        }
    }

    @Test func emptyFieldsRoundTrip() throws {
        var record = F.record(fields: [:])
        record.parent = nil
        record.changeTag = nil
        let sealed = try RecordSealing.seal(record, with: key)
        #expect(sealed.fields.keys.sorted() == [RecordSealing.fieldName])
        #expect(RecordSealing.keyVersion(of: sealed) == 3)
        let opened = try RecordSealing.open(sealed, with: key)
        #expect(opened == record)
    }

    @Test func theSealedRecordKeepsWhatTheCloudNeedsAndOnlyTheEnvelope() throws {
        let marker = "PLAINTEXT-MARKER-81237"
        let record = F.record(fields: ["title": .text(marker), "count": .integer(7)])
        let sealed = try RecordSealing.seal(record, with: key)
        #expect(sealed.id == record.id)
        #expect(sealed.type == record.type)
        #expect(sealed.parent == record.parent)
        #expect(sealed.fieldVersions == record.fieldVersions)
        #expect(sealed.changeTag == record.changeTag)
        #expect(Array(sealed.fields.keys) == [RecordSealing.fieldName])
        guard case .bytes(let envelope) = sealed.fields[RecordSealing.fieldName] else {
            Issue.record("the envelope is not bytes")
            return
        }
        #expect(Array(envelope.prefix(2)) == RecordSealing.magic)
        #expect(Array(envelope.dropFirst(2).prefix(4)) == [0, 0, 0, 3])
        #expect(envelope.range(of: Data(marker.utf8)) == nil, "the value is readable in the envelope")
        #expect(envelope.range(of: Data("title".utf8)) == nil, "the field's name is readable in the envelope")
        #expect(RecordSealing.keyVersion(of: sealed) == 3)
    }

    @Test func twoSealsOfOneRecordDiffer() throws {
        let record = F.record(fields: ["title": .text("same")])
        let first = try RecordSealing.seal(record, with: key)
        let second = try RecordSealing.seal(record, with: key)
        #expect(first.envelope != second.envelope)
        #expect(first.envelope.count == second.envelope.count)
        #expect(try RecordSealing.open(first, with: key) == record)
        #expect(try RecordSealing.open(second, with: key) == record)
    }

    /// Every single-bit flip and every whole-byte change of a small envelope is refused: the
    /// magic as not sealed, everything after it (version, nonce, ciphertext, tag) as tampered.
    @Test func flippingAnyByteOfTheEnvelopeIsRefused() throws {
        let record = F.record(fields: ["n": .integer(1)])
        let sealed = try RecordSealing.seal(record, with: key)
        let envelope = sealed.envelope
        #expect(envelope.count == 6 + 12 + FastJSON.text(ofFields: record.fields).utf8.count + 16)
        for position in 0..<envelope.count {
            for mask: UInt8 in [0x01, 0x80, 0xFF] {
                var broken = sealed
                var bytes = envelope
                bytes[position] ^= mask
                broken.envelope = bytes
                let expected: EncryptionError = position < 2 ? .unsealedRecord(record.id) : .tamperedRecord(record.id)
                #expect(throws: expected, "byte \(position) ^ \(mask)") { try RecordSealing.open(broken, with: key) }
                if position < 2 {
                    #expect(RecordSealing.keyVersion(of: broken) == nil)
                }
            }
        }
    }

    @Test func truncatedOrExtendedEnvelopesAreRefused() throws {
        let record = F.record(fields: ["n": .integer(1)])
        let sealed = try RecordSealing.seal(record, with: key)
        let envelope = sealed.envelope
        for length in 0..<envelope.count {
            var broken = sealed
            broken.envelope = envelope.prefix(length)
            let expected: EncryptionError = length <= 6 ? .unsealedRecord(record.id) : .tamperedRecord(record.id)
            #expect(throws: expected, "\(length) bytes") { try RecordSealing.open(broken, with: key) }
        }
        for extra in [Data([0]), Data(count: 16), envelope.suffix(16)] {
            var broken = sealed
            broken.envelope = envelope + extra
            #expect(throws: EncryptionError.tamperedRecord(record.id)) { try RecordSealing.open(broken, with: key) }
        }
        // A slice that does not start at index 0 opens like the whole.
        var sliced = sealed
        sliced.envelope = (Data([9, 9, 9]) + envelope).dropFirst(3)
        #expect(try RecordSealing.open(sliced, with: key) == record)
        #expect(RecordSealing.keyVersion(of: sliced) == 3)
    }

    @Test func anEnvelopeMovedToAnotherRecordIsRefused() throws {
        let record = F.record(fields: ["title": .text("secret"), "size": .integer(9)])
        let sealed = try RecordSealing.seal(record, with: key)
        let moves: [(String, (inout CloudRecord) -> Void)] = [
            ("record name", { $0.id.name = "row-2" }),
            ("record name case", { $0.id.name = "Row-1" }),
            ("zone name", { $0.id.zone.name = "other" }),
            ("zone owner", { $0.id.zone.owner = "mallory" }),
            ("type", { $0.type = "secrets" }),
            ("no parent", { $0.parent = nil }),
            ("parent name", { $0.parent?.name = "folder-2" }),
            ("parent zone", { $0.parent?.zone.name = "other" }),
            ("parent owner", { $0.parent?.zone.owner = "mallory" }),
            ("version added", { $0.fieldVersions["extra"] = F.timestamp(1) }),
            ("version removed", { $0.fieldVersions["size"] = nil }),
            ("all versions removed", { $0.fieldVersions = [:] }),
            ("version milliseconds", { $0.fieldVersions["title"]?.milliseconds += 1 }),
            ("version counter", { $0.fieldVersions["title"]?.counter += 1 }),
            ("version node", { $0.fieldVersions["title"]?.node = "device-2" }),
            (
                "versions swapped between fields",
                {
                    $0.fieldVersions["title"] = F.timestamp(5)
                    $0.fieldVersions["size"] = F.timestamp(6)
                }
            ),
            (
                "version renamed",
                {
                    $0.fieldVersions["Title"] = $0.fieldVersions["title"]
                    $0.fieldVersions["title"] = nil
                }
            ),
        ]
        var unparented = record
        unparented.parent = nil
        let sealedWithoutParent = try RecordSealing.seal(unparented, with: key)
        for (what, move) in moves {
            var moved = sealed
            move(&moved)
            #expect(throws: EncryptionError.tamperedRecord(moved.id), "\(what)") { try RecordSealing.open(moved, with: key) }
        }
        // A parentless record's envelope does not open under a parent.
        var parented = sealedWithoutParent
        parented.parent = CloudRecordID(name: "", zone: F.zone)
        #expect(throws: EncryptionError.tamperedRecord(parented.id)) { try RecordSealing.open(parented, with: key) }
    }

    /// What is not bound to the envelope: the change tag (the cloud assigns a new one on
    /// every save) and plaintext fields beside the envelope (dropped when opening).
    @Test func theChangeTagIsFreeAndPlaintextFieldsBesideTheEnvelopeAreDropped() throws {
        let record = F.record(fields: ["title": .text("secret")])
        var sealed = try RecordSealing.seal(record, with: key)
        sealed.changeTag = "server-tag-99"
        sealed.fields["title"] = .text("injected by the cloud")
        sealed.fields["admin"] = .integer(1)
        #expect(RecordSealing.keyVersion(of: sealed) == nil, "extra fields make it unsealed for keyVersion")
        let opened = try RecordSealing.open(sealed, with: key)
        #expect(opened.fields == record.fields)
        #expect(opened.changeTag == "server-tag-99")
    }

    @Test func anotherKeyOfTheSameVersionIsRefused() throws {
        let record = F.record(fields: ["title": .text("secret")])
        let sealed = try RecordSealing.seal(record, with: key)
        for _ in 0..<8 {
            #expect(throws: EncryptionError.tamperedRecord(record.id)) {
                try RecordSealing.open(sealed, with: ZoneKey.random(version: 3))
            }
        }
    }

    /// The key's version is bound to the envelope: the right bytes under another version
    /// number, or the header rewritten to another version, fail.
    @Test func aWrongKeyVersionIsRefused() throws {
        let record = F.record(fields: ["title": .text("secret")])
        let sealed = try RecordSealing.seal(record, with: key)
        for version in [0, 2, 4, 256, 1 << 24, Int(UInt32.max)] {
            let renumbered = ZoneKey(version: version, key: key.key)
            #expect(throws: EncryptionError.tamperedRecord(record.id), "opened as version \(version)") {
                try RecordSealing.open(sealed, with: renumbered)
            }
            var rewritten = sealed
            var bytes = sealed.envelope
            withUnsafeBytes(of: UInt32(version).bigEndian) { bytes.replaceSubrange(2..<6, with: $0) }
            rewritten.envelope = bytes
            #expect(RecordSealing.keyVersion(of: rewritten) == version)
            #expect(throws: EncryptionError.tamperedRecord(record.id), "header says \(version), key matches it") {
                try RecordSealing.open(rewritten, with: renumbered)
            }
            #expect(throws: EncryptionError.tamperedRecord(record.id), "header says \(version), sealing key") {
                try RecordSealing.open(rewritten, with: key)
            }
        }
    }

    @Test func keyVersionOfRecordsThatAreNotSealedIsNil() throws {
        let zone = F.zone
        func record(_ fields: [String: CloudValue]) -> CloudRecord {
            CloudRecord(id: CloudRecordID(name: "x", zone: zone), type: "t", fields: fields)
        }
        let magic = Data(RecordSealing.magic)
        #expect(RecordSealing.keyVersion(of: record([:])) == nil)
        #expect(RecordSealing.keyVersion(of: record(["title": .text("plain")])) == nil)
        #expect(RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .text("S1\0\0\0\u{1}xxxxxxxx")])) == nil)
        #expect(RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .null])) == nil)
        #expect(RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .bytes(Data())])) == nil)
        #expect(RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .bytes(magic)])) == nil)
        #expect(RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .bytes(magic + Data([0, 0, 0, 1]))])) == nil)
        #expect(RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .bytes(Data([0x53, 0x32, 0, 0, 0, 1, 0]))])) == nil)
        #expect(RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .bytes(Data([0x73, 0x31, 0, 0, 0, 1, 0]))])) == nil)
        #expect(RecordSealing.keyVersion(of: record(["other.sealed": .bytes(magic + Data([0, 0, 0, 1, 0]))])) == nil)
        // Seven bytes are enough to name a version (opening them is another matter).
        let short = record([RecordSealing.fieldName: .bytes(magic + Data([0, 0, 1, 2, 0]))])
        #expect(RecordSealing.keyVersion(of: short) == 258)
        #expect(throws: EncryptionError.tamperedRecord(short.id)) { try RecordSealing.open(short, with: ZoneKey.random(version: 258)) }
        #expect(
            RecordSealing.keyVersion(of: record([RecordSealing.fieldName: .bytes(magic + Data([0xFF, 0xFF, 0xFF, 0xFF, 0]))]))
                == Int(UInt32.max))
        #expect(throws: EncryptionError.unsealedRecord(record([:]).id)) { try RecordSealing.open(record(["a": .integer(1)]), with: key) }
    }

    @Test func keyVersionReadsEveryVersionBack() throws {
        for version in [0, 1, 2, 255, 256, 65_535, 65_536, 1 << 24, Int(Int32.max), Int(UInt32.max)] {
            let key = ZoneKey.random(version: version)
            let record = F.record(fields: ["v": .integer(Int64(version))])
            let sealed = try RecordSealing.seal(record, with: key)
            #expect(RecordSealing.keyVersion(of: sealed) == version)
            #expect(try RecordSealing.open(sealed, with: key) == record)
        }
    }

    // MARK: Retired keys

    @Test func aRetiredKeyOpensEditsUpToTheGraceAndRefusesLaterOnes() throws {
        let retiredAt: Int64 = 1_700_000_000_000
        var retired = key
        retired.retiredAt = F.timestamp(retiredAt, counter: 5, node: "rotator")
        let grace = RecordSealing.retirementGrace
        #expect(grace == 300_000)
        for (offset, opens) in [
            (-1_000_000, true), (-1, true), (0, true), (1, true), (grace - 1, true), (grace, true), (grace + 1, false),
            (grace + 1_000_000, false),
        ] as [(Int64, Bool)] {
            let record = F.record(fields: ["title": .text("edit")], at: retiredAt + offset)
            let sealed = try RecordSealing.seal(record, with: key)
            if opens {
                #expect(try RecordSealing.open(sealed, with: retired) == record, "edit at retirement \(offset >= 0 ? "+" : "")\(offset) ms")
            } else {
                #expect(throws: EncryptionError.retiredKey(record.id, version: 3), "edit at retirement +\(offset) ms") {
                    try RecordSealing.open(sealed, with: retired)
                }
            }
            // The same envelope opens with the key before it was retired.
            #expect(try RecordSealing.open(sealed, with: key) == record)
        }
    }

    @Test func oneLateFieldAmongOldOnesIsEnoughToRefuse() throws {
        let retiredAt: Int64 = 50_000_000
        var retired = key
        retired.retiredAt = F.timestamp(retiredAt)
        var record = F.record(fields: ["a": .integer(1), "b": .integer(2), "c": .integer(3)], at: retiredAt - 10_000)
        record.fieldVersions["b"] = F.timestamp(retiredAt + RecordSealing.retirementGrace + 1, counter: 0)
        let sealed = try RecordSealing.seal(record, with: key)
        #expect(throws: EncryptionError.retiredKey(record.id, version: 3)) { try RecordSealing.open(sealed, with: retired) }
        // At the grace's last millisecond, the counter does not matter.
        record.fieldVersions["b"] = F.timestamp(retiredAt + RecordSealing.retirementGrace, counter: UInt32.max)
        #expect(try RecordSealing.open(try RecordSealing.seal(record, with: key), with: retired) == record)
    }

    @Test func authenticationIsCheckedBeforeRetirement() throws {
        var retired = key
        retired.retiredAt = F.timestamp(0)
        let record = F.record(fields: ["title": .text("late")], at: 10_000_000)
        var sealed = try RecordSealing.seal(record, with: key)
        sealed.envelope[sealed.envelope.count - 1] ^= 1
        #expect(throws: EncryptionError.tamperedRecord(record.id)) { try RecordSealing.open(sealed, with: retired) }
    }
}
