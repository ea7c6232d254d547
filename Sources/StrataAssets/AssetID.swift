import Crypto
import Foundation
import StrataSQLite

/// The identifier of an asset: the SHA-256 of its uncompressed bytes, as 64 lowercase
/// hexadecimal characters.
///
/// Because the identifier is derived from the content, the same bytes get the same identifier in
/// every database on every device. That is what lets a record column hold an `AssetID` and be
/// synced on its own: the receiving side knows which content the record needs, and whether it
/// already has it, without asking the sender.
///
/// Use it as the type of a record's column (it is stored as TEXT):
///
/// ```swift
/// struct Player: TableRecord {
///     var id: Int64
///     var name: String
///     var avatar: AssetID?
/// }
/// ```
public struct AssetID: Hashable, Sendable, Comparable, CustomStringConvertible, Codable {
    /// The 64 lowercase hexadecimal characters of the SHA-256 digest.
    public let hexadecimal: String

    /// An identifier from its hexadecimal form; nil unless it is 64 hexadecimal characters.
    /// Uppercase digits are accepted and normalized to lowercase.
    public init?(hexadecimal: String) {
        let lowercased = hexadecimal.lowercased()
        guard lowercased.utf8.count == 64,
            lowercased.utf8.allSatisfy({
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            })
        else { return nil }
        self.hexadecimal = lowercased
    }

    /// The identifier of a finished SHA-256 digest.
    init(digest: SHA256.Digest) {
        hexadecimal = digest.hexadecimalString
    }

    /// The identifier of some bytes: their SHA-256. Does not touch any database.
    public init(of data: Data) {
        self.init(digest: SHA256.hash(data: data))
    }

    /// The 32 bytes of the digest.
    public var digestBytes: Data {
        var bytes = Data(capacity: 32)
        var high: UInt8?
        for character in hexadecimal.utf8 {
            let nibble = character <= UInt8(ascii: "9") ? character - UInt8(ascii: "0") : character - UInt8(ascii: "a") + 10
            if let pending = high {
                bytes.append(pending << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return bytes
    }

    public var description: String { hexadecimal }

    public static func < (lhs: AssetID, rhs: AssetID) -> Bool { lhs.hexadecimal < rhs.hexadecimal }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = AssetID(hexadecimal: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a SHA-256 asset identifier: \(text)")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(hexadecimal)
    }
}

extension AssetID: DatabaseValueConvertible {
    /// Stored as TEXT, so the column reads well in the `sqlite3` shell and can carry a foreign
    /// key to `strata_assets(sha256)`.
    public var databaseValue: DatabaseValue { .text(hexadecimal) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> AssetID? {
        if case .text(let text) = value { AssetID(hexadecimal: text) } else { nil }
    }
}

extension SHA256.Digest {
    var hexadecimalString: String {
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        var characters = [UInt8]()
        characters.reserveCapacity(64)
        for byte in self {
            characters.append(digits[Int(byte >> 4)])
            characters.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: characters, as: UTF8.self)
    }
}
