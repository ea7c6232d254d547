import Foundation
import StrataSync

/// A record's fields and versions as the store keeps them: JSON in `jsonb` columns.
enum RecordCoding {
    static func encodeFields(_ fields: [String: CloudValue]) throws -> String {
        String(decoding: try JSONEncoder().encode(fields), as: UTF8.self)
    }

    static func encodeVersions(_ versions: [String: HybridTimestamp]) throws -> String {
        String(decoding: try JSONEncoder().encode(versions), as: UTF8.self)
    }

    /// A record from its stored columns.
    static func record(
        zone: CloudZoneID, name: String, type: String, fields: String, versions: String, parent: String?, changeTag: String
    ) throws -> CloudRecord {
        CloudRecord(
            id: CloudRecordID(name: name, zone: zone), type: type,
            fields: try JSONDecoder().decode([String: CloudValue].self, from: Data(fields.utf8)),
            fieldVersions: try JSONDecoder().decode([String: HybridTimestamp].self, from: Data(versions.utf8)),
            parent: parent.map { CloudRecordID(name: $0, zone: zone) },
            changeTag: changeTag)
    }

    /// The columns every record query selects, in ``record(zone:name:type:fields:versions:parent:changeTag:)``'s order.
    static let columns = "name, type, fields::text, field_versions::text, parent, change_tag"

    typealias Row = (String, String, String, String, String?, String)
}
