import Foundation

/// A type with a hand-written JSON form equal to its `Codable` one (``JSONWriter``,
/// ``JSONReader``): the record shapes a sync moves by the thousand.
package protocol FastJSONCodable: Codable {
    /// Writes the value as its `Encodable` conformance would (with the wire's strategies:
    /// base64 data, non-finite reals as strings).
    func write(to writer: inout JSONWriter) throws
    /// Reads a value, throwing for anything short of exactly the shape ``write(to:)`` writes.
    init(reading reader: inout JSONReader) throws(JSONReaderError)
}

/// Encoding and decoding through the fast path when a type has one, `JSONEncoder` and
/// `JSONDecoder` otherwise.
///
/// Decoding tries the strict fast reader first; when it refuses the bytes, they are decoded
/// again by `decoder`, whose value or error is the answer. A malformed body is therefore
/// reported exactly as before (the coding path the service names in `InvalidRequest`), and a
/// valid body the fast reader is too strict for still decodes.
package enum FastJSON {
    package static func encode<T: Encodable>(_ value: T, fallback encoder: JSONEncoder) throws -> Data {
        if let fast = value as? any FastJSONCodable {
            var writer = JSONWriter()
            try fast.write(to: &writer)
            return writer.data
        }
        return try encoder.encode(value)
    }

    package static func decode<T: Decodable>(_ type: T.Type, from data: Data, fallback decoder: JSONDecoder) throws -> T {
        if let fast = type as? any FastJSONCodable.Type {
            var reader = JSONReader(data)
            if let value = try? fast.init(reading: &reader), (try? reader.end()) != nil, let typed = value as? T {
                return typed
            }
        }
        return try decoder.decode(type, from: data)
    }

    /// One value from its whole text.
    package static func read<T: FastJSONCodable>(_ type: T.Type, from text: String) throws(JSONReaderError) -> T {
        var reader = JSONReader(text)
        let value = try T(reading: &reader)
        try reader.end()
        return value
    }

    /// A value's text.
    package static func text(of value: some FastJSONCodable) throws -> String {
        var writer = JSONWriter()
        try value.write(to: &writer)
        return writer.text
    }
}
