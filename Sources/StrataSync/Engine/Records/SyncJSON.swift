import Foundation

/// The JSON the metadatabase stores: field versions and last known server records.
enum SyncJSON {
    // Made once: creating a coder costs more than coding a small record with it.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()
    private static let decoder = JSONDecoder()

    static func encode<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ type: T.Type, from text: String) throws -> T {
        try decoder.decode(type, from: Data(text.utf8))
    }

    static func versions(_ text: String) throws -> [String: HybridTimestamp] {
        try decode([String: HybridTimestamp].self, from: text)
    }
}
