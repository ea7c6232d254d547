import Foundation

/// The JSON the metadatabase stores: field versions and last known server records.
///
/// Records and versions go through the hand-written form (StrataCloud's `FastJSON`): every
/// record a sync sends or applies is stored here, and `JSONEncoder` cost more than the rest of
/// the work on it. Text the fast reader refuses is decoded by `JSONDecoder`, as before.
enum SyncJSON {
    // Made once: creating a coder costs more than coding a small record with it.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    private static let decoder = JSONDecoder()

    static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try FastJSON.encode(value, fallback: encoder), as: UTF8.self)
    }

    static func encode(_ versions: [String: HybridTimestamp]) -> String {
        FastJSON.text(ofVersions: versions)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        if let fast = type as? any FastJSONCodable.Type, let value = try? FastJSON.read(fast, from: text) as? T {
            return value
        }
        return try decoder.decode(type, from: Data(text.utf8))
    }

    static func versions(_ text: String) throws -> [String: HybridTimestamp] {
        try FastJSON.versions(from: text) ?? decoder.decode([String: HybridTimestamp].self, from: Data(text.utf8))
    }
}
