import Foundation

/// The Codable convenience path for writing: an `Encodable` record gets `encodeColumns(to:)`,
/// which encodes the value once into a name-to-value table and appends the values in
/// ``TableRecord/columnNames`` order. Missing keys (nil optionals) are stored as NULL;
/// properties whose type is not ``DatabaseValueConvertible`` are stored as JSON text.
extension TableRecord where Self: Encodable {
    /// Appends the record's values in ``TableRecord/columnNames`` order, through `Encodable`.
    public func encodeColumns(to columns: inout ColumnEncoder) throws {
        let storage = RecordEncoderStorage()
        try encode(to: RecordEncoder(storage: storage))
        if let failure = storage.failure {
            throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: failure))
        }
        for name in Self.columnNames {
            columns.append(storage.values[name] ?? .null)
        }
    }
}

final class RecordEncoderStorage {
    var values: [String: DatabaseValue] = [:]
    /// Set when the record used a container that cannot map to columns. Encoder methods cannot
    /// throw, so the misuse is reported when encoding returns.
    var failure: String?
}

struct RecordEncoder: Encoder {
    let storage: RecordEncoderStorage
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordKeyedEncoder<Key>(storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        storage.failure = "a record must encode as a keyed container (one key per column), not an unkeyed one"
        return DiscardingContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        storage.failure = "a record must encode as a keyed container (one key per column), not a single value"
        return DiscardingContainer()
    }
}

private struct RecordKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: RecordEncoderStorage
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws {
        storage.values[key.stringValue] = .null
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        if let convertible = value as? any DatabaseValueConvertible {
            storage.values[key.stringValue] = convertible.databaseValue
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let data = try encoder.encode(value)
        storage.values[key.stringValue] = .text(String(decoding: data, as: UTF8.self))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        storage.failure = "nested containers are not columns; give \(key.stringValue) an Encodable type, stored as JSON"
        return KeyedEncodingContainer(RecordKeyedEncoder<NestedKey>(storage: RecordEncoderStorage()))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        storage.failure = "nested containers are not columns; give \(key.stringValue) an Encodable type, stored as JSON"
        return DiscardingContainer()
    }

    mutating func superEncoder() -> any Encoder { RecordEncoder(storage: storage) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(storage: storage) }
}

/// Accepts and drops values after a misuse has been recorded.
private struct DiscardingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(RecordKeyedEncoder<NestedKey>(storage: RecordEncoderStorage()))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingContainer() }
    mutating func superEncoder() -> any Encoder { RecordEncoder(storage: RecordEncoderStorage()) }
}
