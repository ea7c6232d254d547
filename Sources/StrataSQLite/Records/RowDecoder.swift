import Foundation

/// The Codable convenience path: a `Decodable` type gets `init(row:)` matching its coding keys
/// to column names. Column names are resolved through a table built once per statement, but
/// each property still costs a lookup per row; write `init(row:)` by index (or use `@Table`)
/// where speed matters.
///
/// Properties whose type is not ``DatabaseValueConvertible`` (nested structs, arrays) are
/// decoded from JSON text.
extension FetchableRecord where Self: Decodable {
    /// Decodes the row through `Decodable`, matching coding keys to column names.
    public init(row: Row) throws {
        try self.init(from: RowDecoder(row: row))
    }
}

struct RowDecoder: Decoder {
    let row: Row
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowKeyedContainer<Key>(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: [], debugDescription: "a row decodes as a keyed container (column names), not an array"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        RowSingleValueContainer(row: row)
    }
}

/// Decodes a value from a column: directly when its type is stored as one SQLite value,
/// from JSON text otherwise.
private func decodeColumn<T: Decodable>(_ type: T.Type, row: Row, index: Int, codingPath: [any CodingKey]) throws -> T {
    if let convertible = T.self as? any DatabaseValueConvertible.Type {
        func decode<V: DatabaseValueConvertible>(_ type: V.Type) throws -> Any { try row.decode(V.self, at: index) }
        if let value = try decode(convertible) as? T { return value }
    }
    let data: Data
    switch row.value(at: index) {
    case .text(let text): data = Data(text.utf8)
    case .blob(let blob): data = blob
    default:
        throw row.decodingError(T.self, at: index)
    }
    do {
        return try JSONDecoder().decode(T.self, from: data)
    } catch {
        throw row.decodingError(T.self, at: index)
    }
}

private struct RowKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: Row
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        (0..<row.count).compactMap { Key(stringValue: row.columnName(at: $0)) }
    }

    func contains(_ key: Key) -> Bool {
        row.statement.columnIndex(named: key.stringValue) != nil
    }

    private func index(of key: Key) throws -> Int {
        guard let index = row.statement.columnIndex(named: key.stringValue) else {
            throw DecodingError.keyNotFound(
                key,
                .init(
                    codingPath: [key],
                    debugDescription: "no column \"\(key.stringValue)\" in the result of `\(row.statement.sql)`"))
        }
        return index
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        row.isNull(at: try index(of: key))
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeColumn(T.self, row: row, index: try index(of: key), codingPath: [key])
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try row.decode(at: index(of: key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try row.decode(at: index(of: key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try row.decode(at: index(of: key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try row.decode(at: index(of: key)) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try row.decode(at: index(of: key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try row.decode(at: index(of: key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try row.decode(at: index(of: key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try row.decode(at: index(of: key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try row.decode(at: index(of: key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decodeUnsigned(forKey: key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try row.decode(at: index(of: key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try row.decode(at: index(of: key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try row.decode(at: index(of: key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decodeUnsigned(forKey: key) }

    private func decodeUnsigned<T: FixedWidthInteger>(forKey key: Key) throws -> T {
        let index = try index(of: key)
        guard let value = T(exactly: try row.decode(Int64.self, at: index)) else {
            throw row.decodingError(T.self, at: index)
        }
        return value
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(
            type,
            .init(codingPath: [key], debugDescription: "nested containers are stored as JSON text; decode the property's type directly"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self,
            .init(codingPath: [key], debugDescription: "nested containers are stored as JSON text; decode the property's type directly"))
    }

    func superDecoder() throws -> any Decoder { RowDecoder(row: row) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row) }
}

private struct RowSingleValueContainer: SingleValueDecodingContainer {
    let row: Row
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { row.isNull(at: 0) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeColumn(T.self, row: row, index: 0, codingPath: [])
    }
}
