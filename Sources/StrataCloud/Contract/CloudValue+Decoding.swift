import Foundation

/// Strict decoding of the encoded form `{"case": {"_0": payload}}` (`{"null": {}}`): exactly
/// one known case key, and exactly the payload's keys. The synthesized decoder ignores keys it
/// does not know, so `{"asset": {...}, "extra": 1}` decoded as an asset; the wire format's
/// schema says every case is closed (`additionalProperties: false`), and a value that is not
/// one of them is malformed input, named by its coding path.
extension CloudValue {
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private static let payloadKey = AnyKey(stringValue: "_0")

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        let keys = container.allKeys
        guard keys.count == 1, let key = keys.first else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath,
                    debugDescription:
                        "a value has exactly one of null, integer, real, text, bytes, asset; found \(keys.map(\.stringValue).sorted())"))
        }
        switch key.stringValue {
        case "null":
            let payload = try container.nestedContainer(keyedBy: AnyKey.self, forKey: key)
            guard payload.allKeys.isEmpty else { throw Self.unexpectedKeys(in: payload, expected: []) }
            self = .null
        case "integer": self = .integer(try Self.wholeNumberPayload(of: key, in: container))
        case "real": self = .real(try Self.payload(Double.self, of: key, in: container))
        case "text": self = .text(try Self.payload(String.self, of: key, in: container))
        case "bytes": self = .bytes(try Self.payload(Data.self, of: key, in: container))
        case "asset": self = .asset(try Self.payload(CloudAssetReference.self, of: key, in: container))
        default:
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: container.codingPath + [key],
                    debugDescription: "\"\(key.stringValue)\" is not a value's case (null, integer, real, text, bytes, asset)"))
        }
    }

    private static func payload<T: Decodable>(_ type: T.Type, of key: AnyKey, in container: KeyedDecodingContainer<AnyKey>) throws -> T {
        let payload = try container.nestedContainer(keyedBy: AnyKey.self, forKey: key)
        guard payload.allKeys.count == 1, payload.allKeys.first?.stringValue == payloadKey.stringValue else {
            throw unexpectedKeys(in: payload, expected: [payloadKey.stringValue])
        }
        return try payload.decode(T.self, forKey: payloadKey)
    }

    /// An integer's payload: a number that is not a whole one names the payload's key.
    private static func wholeNumberPayload(of key: AnyKey, in container: KeyedDecodingContainer<AnyKey>) throws -> Int64 {
        let payload = try container.nestedContainer(keyedBy: AnyKey.self, forKey: key)
        guard payload.allKeys.count == 1, payload.allKeys.first?.stringValue == payloadKey.stringValue else {
            throw unexpectedKeys(in: payload, expected: [payloadKey.stringValue])
        }
        return try payload.decodeWholeNumber(Int64.self, forKey: payloadKey)
    }

    private static func unexpectedKeys(in payload: KeyedDecodingContainer<AnyKey>, expected: [String]) -> DecodingError {
        DecodingError.dataCorrupted(
            .init(
                codingPath: payload.codingPath,
                debugDescription: "expected the keys \(expected), found \(payload.allKeys.map(\.stringValue).sorted())"))
    }
}
