import CSQLite
import Foundation

/// A Swift type that is stored as a single SQLite value.
///
/// Conform your own types with the two requirements; the standard library types Strata supports
/// (Bool, integers, Double, Float, String, Data, Date, UUID, and optionals of them) conform
/// already, and so does every `RawRepresentable` whose raw value conforms.
///
/// ```swift
/// struct Email: DatabaseValueConvertible {
///     var rawValue: String
///     var databaseValue: DatabaseValue { .text(rawValue) }
///     static func fromDatabaseValue(_ value: DatabaseValue) -> Email? {
///         if case .text(let text) = value { Email(rawValue: text) } else { nil }
///     }
/// }
/// ```
///
/// The built-in types also implement the two low-level hooks (`bind(to:at:)` and
/// `decode(from:at:)`), which read and write the statement directly without building a
/// ``DatabaseValue``; that is what keeps fetching close to the raw C API.
public protocol DatabaseValueConvertible: Sendable {
    /// The value to store.
    var databaseValue: DatabaseValue { get }

    /// The Swift value for a stored value, or nil when the stored value cannot represent one.
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?

    /// Binds the value to the statement's parameter at a 1-based index. Returns SQLite's result.
    func bind(to statement: OpaquePointer, at index: Int32) -> Int32

    /// Decodes the column at a 0-based index of the statement's current row.
    ///
    /// Returns nil when the column's value cannot represent `Self` (for example NULL for a
    /// non-optional type); the caller turns that into a ``RowDecodingError``.
    static func decode(from statement: OpaquePointer, at index: Int32) -> Self?
}

extension DatabaseValueConvertible {
    /// Binds ``databaseValue``; types with a faster direct binding implement their own.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        databaseValue.bind(to: statement, at: index)
    }

    /// Reads the column as a ``DatabaseValue``, then ``fromDatabaseValue(_:)``; types with a faster direct read implement their own.
    public static func decode(from statement: OpaquePointer, at index: Int32) -> Self? {
        fromDatabaseValue(DatabaseValue(statement: statement, column: index))
    }
}

extension DatabaseValue {
    /// Reads a column of the statement's current row.
    init(statement: OpaquePointer, column index: Int32) {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER:
            self = .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT:
            self = .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            self = .text(String(sqliteText: sqlite3_column_text(statement, index), count: sqlite3_column_bytes(statement, index)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, index))
            if count == 0 {
                self = .blob(Data())
            } else if let bytes = sqlite3_column_blob(statement, index) {
                self = .blob(Data(bytes: bytes, count: count))
            } else {
                self = .blob(Data())
            }
        default:
            self = .null
        }
    }

    /// Reads a function argument or any other `sqlite3_value`.
    init(sqliteValue value: OpaquePointer) {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            self = .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            self = .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            self = .text(String(sqliteText: sqlite3_value_text(value), count: sqlite3_value_bytes(value)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_value_bytes(value))
            if count > 0, let bytes = sqlite3_value_blob(value) {
                self = .blob(Data(bytes: bytes, count: count))
            } else {
                self = .blob(Data())
            }
        default:
            self = .null
        }
    }

    /// Binds the value with the `sqlite3_bind_*` function of its storage class; returns SQLite's result code.
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        switch self {
        case .null:
            return sqlite3_bind_null(statement, index)
        case .integer(let value):
            return sqlite3_bind_int64(statement, index, value)
        case .real(let value):
            return sqlite3_bind_double(statement, index, value)
        case .text(let value):
            return bindText(value, to: statement, at: index)
        case .blob(let data):
            return bindBlob(data, to: statement, at: index)
        }
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    /// The value itself.
    public var databaseValue: DatabaseValue { self }
    /// The value itself: never nil.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
}

/// SQLITE_TRANSIENT: SQLite copies the bytes before the bind call returns.
@usableFromInline let sqliteTransient = strata_sqlite3_transient()

@inlinable @inline(__always)
func bindText(_ text: String, to statement: OpaquePointer, at index: Int32) -> Int32 {
    var text = text
    return text.withUTF8 { buffer in
        // An empty buffer may have a nil base address; SQLite reads NULL as SQL NULL, so pass a
        // valid pointer for the empty string.
        guard let base = buffer.baseAddress else {
            return sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
        }
        return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
            sqlite3_bind_text64(statement, index, $0, sqlite3_uint64(buffer.count), sqliteTransient, UInt8(SQLITE_UTF8))
        }
    }
}

@inlinable @inline(__always)
func bindBlob(_ data: Data, to statement: OpaquePointer, at index: Int32) -> Int32 {
    data.withUnsafeBytes { buffer in
        // A zero-length blob must still be a blob, not NULL.
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            return sqlite3_bind_zeroblob(statement, index, 0)
        }
        return sqlite3_bind_blob64(statement, index, base, sqlite3_uint64(buffer.count), sqliteTransient)
    }
}

extension String {
    @inlinable @inline(__always)
    init(sqliteText text: UnsafePointer<UInt8>?, count: Int32) {
        guard let text, count > 0 else {
            self = ""
            return
        }
        self = String(decoding: UnsafeBufferPointer(start: text, count: Int(count)), as: UTF8.self)
    }
}
