import CSQLite
import Foundation

// Conformances of the standard types. Each reads and writes the statement directly (the fast
// path); `databaseValue` / `fromDatabaseValue` serve function arguments and generic code.
//
// Decoding fetches the column's `sqlite3_value` once (`sqlite3_column_value`) and asks it for
// its storage class and its content. Each `sqlite3_column_*` call locates the column again
// (statement check, range check, mutex and error bookkeeping: a handful of calls); asking the
// value costs a load or two. Same results: `sqlite3_column_type(s, i)` is
// `sqlite3_value_type(sqlite3_column_value(s, i))`, and likewise for int64, double, text,
// blob and bytes. Callers check the index range before decoding (`Row.decode`).

extension Bool: DatabaseValueConvertible {
    /// Stored as INTEGER 1 or 0.
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    /// Reads a stored number: zero is false, any other integer or real is true; nil for text, blobs and NULL.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let int): int != 0
        case .real(let double): double != 0
        default: nil
        }
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_int64(statement, index, self ? 1 : 0)
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Bool? {
        let value = sqlite3_column_value(statement, index)
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value) != 0
        case SQLITE_FLOAT: return sqlite3_value_double(value) != 0
        default: return nil
        }
    }
}

/// Integers are stored as SQLite's 64-bit INTEGER; a REAL column decodes when it holds an exact
/// integer in range, anything else (NULL, TEXT, BLOB, out of range) fails to decode.
///
/// A value beyond `Int64` (a large `UInt64`, for a type you conform) is stored as REAL, as
/// SQLite itself stores an integer literal too large for 64 bits; it reads back only when the
/// REAL holds it exactly.
public protocol DatabaseInteger: FixedWidthInteger, DatabaseValueConvertible {}

extension DatabaseInteger {
    /// Stored as INTEGER, or REAL beyond `Int64`.
    public var databaseValue: DatabaseValue {
        if let integer = Int64(exactly: self) { return .integer(integer) }
        return .real(Double(self))
    }
    /// Reads an integer, or a real with no fractional part, that fits the type exactly; nil otherwise
    /// (no silent truncation or wrap-around).
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        switch value {
        case .integer(let int): Self(exactly: int)
        case .real(let double): Self(exactly: double)
        default: nil
        }
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        if let integer = Int64(exactly: self) { return sqlite3_bind_int64(statement, index, integer) }
        return sqlite3_bind_double(statement, index, Double(self))
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Self? {
        let value = sqlite3_column_value(statement, index)
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return Self(exactly: sqlite3_value_int64(value))
        case SQLITE_FLOAT: return Self(exactly: sqlite3_value_double(value))
        default: return nil
        }
    }
}

extension Int: DatabaseInteger {}
extension Int64: DatabaseInteger {}
extension Int32: DatabaseInteger {}
extension Int16: DatabaseInteger {}
extension Int8: DatabaseInteger {}
extension UInt32: DatabaseInteger {}
extension UInt16: DatabaseInteger {}
extension UInt8: DatabaseInteger {}

extension Double: DatabaseValueConvertible {
    /// Stored as REAL.
    public var databaseValue: DatabaseValue { .real(self) }
    /// Reads a real, or an integer converted to `Double`; nil for text, blobs and NULL.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .integer(let int): Double(int)
        case .real(let double): double
        default: nil
        }
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        sqlite3_bind_double(statement, index, self)
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Double? {
        let value = sqlite3_column_value(statement, index)
        switch sqlite3_value_type(value) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_value_double(value)
        default: return nil
        }
    }
}

extension Float: DatabaseValueConvertible {
    /// Stored as REAL (widened to `Double`).
    public var databaseValue: DatabaseValue { .real(Double(self)) }
    /// Reads a number as ``Double/fromDatabaseValue(_:)`` does, then narrows it to `Float`.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Float? {
        Double.fromDatabaseValue(value).map(Float.init)
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Float? {
        Double.decode(from: statement, at: index).map(Float.init)
    }
}

extension String: DatabaseValueConvertible {
    /// Stored as TEXT.
    public var databaseValue: DatabaseValue { .text(self) }
    /// Reads text only: numbers and blobs are not converted, so a wrong column type is reported
    /// instead of silently becoming a string.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        if case .text(let text) = value { return text }
        return nil
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        bindText(self, to: statement, at: index)
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> String? {
        let value = sqlite3_column_value(statement, index)
        guard sqlite3_value_type(value) == SQLITE_TEXT else { return nil }
        // sqlite3_value_text before sqlite3_value_bytes: the documented safe order.
        let text = sqlite3_value_text(value)
        return String(sqliteText: text, count: sqlite3_value_bytes(value))
    }
}

extension Data: DatabaseValueConvertible {
    /// Stored as BLOB.
    public var databaseValue: DatabaseValue { .blob(self) }
    /// Reads a blob, or text as its UTF-8 bytes; nil for numbers and NULL.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case .blob(let data): data
        case .text(let text): Data(text.utf8)
        default: nil
        }
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        bindBlob(self, to: statement, at: index)
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Data? {
        let value = sqlite3_column_value(statement, index)
        switch sqlite3_value_type(value) {
        case SQLITE_BLOB:
            let bytes = sqlite3_value_blob(value)
            let count = Int(sqlite3_value_bytes(value))
            guard let bytes, count > 0 else { return Data() }
            return Data(bytes: bytes, count: count)
        case SQLITE_TEXT:
            let text = sqlite3_value_text(value)
            let count = Int(sqlite3_value_bytes(value))
            guard let text, count > 0 else { return Data() }
            return Data(bytes: text, count: count)
        default:
            return nil
        }
    }
}

/// UUIDs are stored as lowercase text (`"e621e1f8-c36c-495a-93fc-0c247a3e6e5f"`), the
/// representation SQLiteData's users know and `sqlite3` shells can read. Decoding also accepts
/// upper-case text and 16-byte blobs.
extension UUID: DatabaseValueConvertible {
    /// Stored as lowercase TEXT.
    public var databaseValue: DatabaseValue { .text(uuidString.lowercased()) }
    /// Reads text in either case, or a 16-byte blob; nil for anything else.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        switch value {
        case .text(let text): return UUID(uuidString: text)
        case .blob(let data):
            guard data.count == 16 else { return nil }
            return data.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
        default: return nil
        }
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        bindText(uuidString.lowercased(), to: statement, at: index)
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    public static func decode(from statement: OpaquePointer, at index: Int32) -> UUID? {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_TEXT:
            let text = sqlite3_column_text(statement, index)
            return UUID(uuidString: String(sqliteText: text, count: sqlite3_column_bytes(statement, index)))
        case SQLITE_BLOB:
            guard sqlite3_column_bytes(statement, index) == 16, let bytes = sqlite3_column_blob(statement, index) else { return nil }
            return UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
        default:
            return nil
        }
    }
}

/// Dates are stored as UTC text `"YYYY-MM-DD HH:MM:SS.SSS"`, the format SQLite's own date
/// functions read and write, so `date(createdAt)` and ordering by the column work in SQL.
/// Decoding also accepts ISO-8601 text with a `T` separator and an optional `Z`, a bare
/// `"YYYY-MM-DD"`, and INTEGER or REAL Unix time in seconds.
extension Date: DatabaseValueConvertible {
    /// Stored as TEXT in SQLite's date format, `YYYY-MM-DD HH:MM:SS.SSS` in UTC, which SQLite's
    /// date functions read.
    public var databaseValue: DatabaseValue { .text(SQLiteDateFormat.string(from: self)) }
    /// Reads SQLite date text, or a number of seconds since 1970 (integer or real); nil otherwise.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        switch value {
        case .text(let text): SQLiteDateFormat.date(from: text)
        case .integer(let seconds): Date(timeIntervalSince1970: TimeInterval(seconds))
        case .real(let seconds): Date(timeIntervalSince1970: seconds)
        default: nil
        }
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        bindText(SQLiteDateFormat.string(from: self), to: statement, at: index)
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// NULL for nil, the wrapped value's storage otherwise.
    public var databaseValue: DatabaseValue {
        self?.databaseValue ?? .null
    }
    /// Reads NULL as nil; any other value as the wrapped type reads it (nil when it cannot).
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if case .null = value { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .none: sqlite3_bind_null(statement, index)
        case .some(let value): value.bind(to: statement, at: index)
        }
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Wrapped?? {
        if sqlite3_value_type(sqlite3_column_value(statement, index)) == SQLITE_NULL { return .some(nil) }
        return Wrapped.decode(from: statement, at: index).map { .some($0) }
    }
}

extension DatabaseValueConvertible where Self: RawRepresentable, RawValue: DatabaseValueConvertible {
    /// Stored as the raw value is.
    public var databaseValue: DatabaseValue { rawValue.databaseValue }
    /// Reads the raw value, then the case or value it names; nil when none does.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        RawValue.fromDatabaseValue(value).flatMap(Self.init(rawValue:))
    }
    /// Binds the value to parameter `index` (1-based) of a prepared statement; returns SQLite's result code.
    @inlinable
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        rawValue.bind(to: statement, at: index)
    }
    /// Reads column `index` of the current row without boxing it, as ``fromDatabaseValue(_:)`` does.
    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Self? {
        RawValue.decode(from: statement, at: index).flatMap(Self.init(rawValue:))
    }
}
