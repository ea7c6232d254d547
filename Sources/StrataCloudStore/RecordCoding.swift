import Foundation
import StrataCloud

/// A record's fields and versions as the store keeps them: JSON in `jsonb` columns.
///
/// JSON has no literal for NaN or the infinities, which `CloudValue.real` may hold: they are
/// stored as the strings `"NaN"`, `"+Infinity"` and `"-Infinity"` where a real goes, as the
/// wire format sends them, and come back as the same values.
enum RecordCoding {
    // Written and read by hand (StrataCloud's `JSONWriter` and `JSONReader`): every record a
    // sync moves passes here, and the Codable coders cost more than the rest of its work. Text
    // the fast reader refuses (written by an earlier version, or by hand) goes to `decoder()`.

    static func encodeFields(_ fields: [String: CloudValue]) -> String {
        FastJSON.text(ofFields: fields)
    }

    static func encodeVersions(_ versions: [String: HybridTimestamp]) -> String {
        FastJSON.text(ofVersions: versions)
    }

    static func decodeFields(_ text: String) throws -> [String: CloudValue] {
        try FastJSON.fields(from: text) ?? decoder().decode([String: CloudValue].self, from: Data(text.utf8))
    }

    static func decodeVersions(_ text: String) throws -> [String: HybridTimestamp] {
        try FastJSON.versions(from: text) ?? decoder().decode([String: HybridTimestamp].self, from: Data(text.utf8))
    }

    private static let nonFinite = (positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")

    static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: nonFinite.positiveInfinity, negativeInfinity: nonFinite.negativeInfinity, nan: nonFinite.nan)
        return decoder
    }

    /// A record from its stored columns.
    static func record(
        zone: CloudZoneID, name: String, type: String, fields: String, versions: String, parent: String?, changeTag: String
    ) throws -> CloudRecord {
        CloudRecord(
            id: CloudRecordID(name: name, zone: zone), type: type,
            fields: try decodeFields(fields),
            fieldVersions: try decodeVersions(versions),
            parent: parent.map { CloudRecordID(name: $0, zone: zone) },
            changeTag: changeTag)
    }

    /// A record from its stored columns, written as ``record(zone:name:type:fields:versions:parent:changeTag:)``
    /// would be, with the stored JSON of its fields and versions copied as it is.
    ///
    /// PostgreSQL writes out a `jsonb` value as JSON text, so the copy is valid JSON: an
    /// object, unless written into the table by hand, which is refused with the error reading
    /// it would give, rather than sent for every device to fail on.
    static func writeRecord(
        zone: CloudZoneID, name: String, type: String, fields: String, versions: String, parent: String?, changeTag: String,
        to writer: inout JSONWriter
    ) throws {
        guard isObject(fields), isObject(versions) else {
            let record = try record(
                zone: zone, name: name, type: type, fields: fields, versions: versions, parent: parent, changeTag: changeTag)
            record.write(to: &writer)
            return
        }
        writer.raw("{\"changeTag\":")
        writer.string(changeTag)
        // Compacted: PostgreSQL writes a `jsonb` value out with a space after every `:` and
        // `,` (about one byte in twenty of a record), which every device would read past and
        // then keep in its metadatabase (`ArrivedRecordText`).
        writer.raw(",\"fieldVersions\":")
        writer.compactJSON(versions)
        writer.raw(",\"fields\":")
        writer.compactJSON(fields)
        writer.raw(",\"id\":")
        CloudRecordID(name: name, zone: zone).write(to: &writer)
        if let parent {
            writer.raw(",\"parent\":")
            CloudRecordID(name: parent, zone: zone).write(to: &writer)
        }
        writer.raw(",\"type\":")
        writer.string(type)
        writer.raw("}")
    }

    private static func isObject(_ json: String) -> Bool {
        json.utf8.first == UInt8(ascii: "{") && json.utf8.last == UInt8(ascii: "}")
    }

    /// The columns every record query selects, in ``record(zone:name:type:fields:versions:parent:changeTag:)``'s order.
    static let columns = "name, type, fields::text, field_versions::text, parent, change_tag"

    typealias Row = (String, String, String, String, String?, String)
}
