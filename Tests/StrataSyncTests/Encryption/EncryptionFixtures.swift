import Crypto
import Foundation
import Testing

@testable import StrataSync

/// Records, assets and keys the encryption suites seal, open and break.
enum EncryptionFixtures {
    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    static func timestamp(_ milliseconds: Int64, counter: UInt32 = 0, node: String = "device-1") -> HybridTimestamp {
        HybridTimestamp(milliseconds: milliseconds, counter: counter, node: node)
    }

    /// A record with a parent, a change tag and one version per field.
    static func record(
        name: String = "row-1", type: String = "notes", fields: [String: CloudValue], at milliseconds: Int64 = 1_700_000_000_000
    ) -> CloudRecord {
        CloudRecord(
            id: CloudRecordID(name: name, zone: zone), type: type, fields: fields,
            fieldVersions: fields.mapValues { _ in timestamp(milliseconds) },
            parent: CloudRecordID(name: "folder-1", zone: zone), changeTag: "tag-7")
    }

    /// Every kind of value, at its extremes.
    static let everyKind: [String: CloudValue] = [
        "null": .null,
        "zero": .integer(0),
        "intMin": .integer(.min),
        "intMax": .integer(.max),
        "minusOne": .integer(-1),
        "realZero": .real(0),
        "realMinusZero": .real(-0.0),
        "realHuge": .real(.greatestFiniteMagnitude),
        "realMinusHuge": .real(-.greatestFiniteMagnitude),
        "realTiny": .real(.leastNonzeroMagnitude),
        "realTinyNormal": .real(.leastNormalMagnitude),
        "realPi": .real(.pi),
        "realThird": .real(1.0 / 3.0),
        "realNaN": .real(.nan),
        "realInfinity": .real(.infinity),
        "realMinusInfinity": .real(-.infinity),
        "textEmpty": .text(""),
        "textUnicode": .text("héllo wörld ✓ 🇫🇷 👩‍👩‍👧 e\u{301} 日本語 \u{202E}rtl"),
        "textNUL": .text("before\u{0}after\u{0}"),
        "textQuotes": .text("\"double\" 'single' \\back\\slash / \n\r\t \u{1}\u{1F}\u{7F}"),
        "textJSON": .text("{\"real\":{\"_0\":1}}"),
        "textLong": .text(String(repeating: "long text ", count: 10_000)),
        "bytesEmpty": .bytes(Data()),
        "bytesAll": .bytes(Data((0...255).map { UInt8($0) })),
        "asset": .asset(CloudAssetReference(hash: String(repeating: "0123456789abcdef", count: 4), size: 1 << 40)),
        "assetEmpty": .asset(CloudAssetReference(hash: String(repeating: "e", count: 64), size: 0)),
        "": .text("a field with an empty name"),
        "field \"with\" quotes\u{0}and NUL": .integer(42),
        "strata.sealed": .text("a user field named like the envelope"),
        "ünïcødé 🔑": .real(2.5),
    ]

    /// Whether two values are the same, bit for bit for reals (-0.0 is not 0.0, NaN is NaN).
    static func same(_ lhs: CloudValue, _ rhs: CloudValue) -> Bool {
        if case .real(let left) = lhs, case .real(let right) = rhs {
            return left.bitPattern == right.bitPattern || (left.isNaN && right.isNaN)
        }
        return lhs == rhs
    }

    static func same(_ lhs: [String: CloudValue], _ rhs: [String: CloudValue]) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { name, value in rhs[name].map { same(value, $0) } ?? false }
    }

    /// Deterministic bytes that do not repeat within a few KB.
    static func content(_ count: Int, seed: UInt64 = 1) -> Data {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            for index in buffer.indices {
                state ^= state << 13
                state ^= state >> 7
                state ^= state << 17
                buffer[index] = UInt8(truncatingIfNeeded: state)
            }
        }
        return data
    }

    static func sha256(_ data: Data) -> String {
        SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    /// A plain asset of `chunks` (data and encoding), named by the SHA-256 of their bytes.
    static func asset(_ chunks: [(Data, Int)], chunkSize: Int64 = 1 << 20) -> CloudAsset {
        let all = chunks.reduce(into: Data()) { $0.append($1.0) }
        let cloudChunks = chunks.enumerated().map { index, chunk in
            CloudAsset.Chunk(
                data: chunk.0, encoding: chunk.1, size: Int64(chunk.0.count) + Int64(chunk.1) * 7,
                crc32: CloudAsset.checksum(ofChunk: index, data: chunk.0))
        }
        return CloudAsset(hash: sha256(all), size: cloudChunks.reduce(0) { $0 + $1.size }, chunkSize: chunkSize, chunks: cloudChunks)
    }
}

extension CloudRecord {
    /// The sealed envelope's bytes (empty when the record has none).
    var envelope: Data {
        get {
            if case .bytes(let data) = fields[RecordSealing.fieldName] { return data }
            return Data()
        }
        set { fields[RecordSealing.fieldName] = .bytes(newValue) }
    }
}
