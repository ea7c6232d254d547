import Foundation
import StrataCloud

/// The JSON conventions both ends of the cloud service use, so a value encoded by one decodes to
/// the same value on the other.
public enum CloudWire {
    /// The media type of every request and response body of `/v1`.
    public static let contentType = "application/json"
    /// The media type of the change stream.
    public static let eventStreamContentType = "text/event-stream"
    /// The header a client sends its bearer token in.
    public static let authorizationHeader = "Authorization"

    /// An encoder for wire bodies. Non-finite reals travel as strings, because JSON has no
    /// literal for them and `CloudValue.real` may hold any `Double`; keys are sorted so equal
    /// values encode to equal bytes.
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: nonFinite.positiveInfinity, negativeInfinity: nonFinite.negativeInfinity, nan: nonFinite.nan)
        encoder.dataEncodingStrategy = .base64
        return encoder
    }

    /// A decoder matching ``makeEncoder()``.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: nonFinite.positiveInfinity, negativeInfinity: nonFinite.negativeInfinity, nan: nonFinite.nan)
        decoder.dataDecodingStrategy = .base64
        return decoder
    }

    private static let nonFinite = (positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
}

extension CloudWire {
    /// A body's JSON: the hand-written form for the record-carrying bodies, `makeEncoder()`'s
    /// otherwise (StrataCloud's `FastJSON`).
    public static func encode(_ value: some Encodable) throws -> Data {
        try FastJSON.encode(value, fallback: makeEncoder())
    }

    /// A body from its JSON: the strict fast reader first, `makeDecoder()` for anything it
    /// refuses, so a malformed body fails with `JSONDecoder`'s error.
    public static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try FastJSON.decode(type, from: data, fallback: makeDecoder())
    }
}
