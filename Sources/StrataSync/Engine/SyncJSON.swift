import Foundation

/// The JSON the metadatabase stores: field versions and last known server records.
enum SyncJSON {
    static func encode<T: Encodable>(_ value: T) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try JSONDecoder().decode(type, from: Data(text.utf8))
    }

    static func versions(_ text: String) throws -> [String: HybridTimestamp] {
        try decode([String: HybridTimestamp].self, from: text)
    }
}
