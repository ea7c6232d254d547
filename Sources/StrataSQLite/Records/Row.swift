import CSQLite

/// The current row of a statement being stepped.
///
/// A `Row` reads its columns by index straight from the statement: no dictionary, no copy.
/// It is only valid inside the `init(row:)` or closure it was given to; do not store it.
///
/// ```swift
/// init(row: Row) throws {
///     id = try row[0]
///     name = try row[1]
///     score = try row[2]
/// }
/// ```
public struct Row {
    @usableFromInline let handle: OpaquePointer
    @usableFromInline unowned(unsafe) let statement: Statement

    @usableFromInline
    init(statement: Statement) {
        self.handle = statement.handle
        self.statement = statement
    }

    /// The number of columns.
    public var count: Int { Int(sqlite3_column_count(handle)) }

    /// The name of the column at a 0-based index; empty for an index outside `0..<count`.
    public func columnName(at index: Int) -> String {
        // SQLite returns NULL for an index outside the row (or when out of memory).
        guard index >= 0, index <= Int(Int32.max), let name = sqlite3_column_name(handle, Int32(index)) else { return "" }
        return String(cString: name)
    }

    /// Decodes the column at a 0-based index.
    ///
    /// Throws ``RowDecodingError`` naming the column and SQL when the stored value cannot be
    /// represented: NULL into a non-optional, TEXT into an integer, an index out of range.
    @inlinable
    public subscript<Value: DatabaseValueConvertible>(_ index: Int) -> Value {
        get throws {
            try decode(Value.self, at: index)
        }
    }

    /// Decodes the column with a name. Prefer indexes on hot paths: a name costs a lookup per
    /// read (the name-to-index table itself is built once per statement).
    public subscript<Value: DatabaseValueConvertible>(_ name: String) -> Value {
        get throws {
            guard let index = statement.columnIndex(named: name) else {
                throw RowDecodingError(
                    columnIndex: -1, columnName: name, storedValue: .null,
                    expectedType: "\(Value.self) (no such column in the result)", sql: statement.sql)
            }
            return try decode(Value.self, at: index)
        }
    }

    /// Decodes the column at a 0-based index.
    // Inlinable so that a record's init(row:) in the client module specializes it per column
    // type: otherwise each read is a generic call that looks up `Optional<Value>` metadata.
    @inlinable @inline(__always)
    public func decode<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self, at index: Int) throws -> Value {
        let column = Int32(truncatingIfNeeded: index)
        if column >= 0, column < sqlite3_column_count(handle), let value = Value.decode(from: handle, at: column) {
            return value
        }
        throw decodingError(Value.self, at: index)
    }

    /// The raw value of the column at a 0-based index.
    public func value(at index: Int) -> DatabaseValue {
        guard index >= 0, index < count else { return .null }
        return DatabaseValue(statement: handle, column: Int32(index))
    }

    /// Whether the column at a 0-based index holds NULL.
    public func isNull(at index: Int) -> Bool {
        sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL
    }

    /// Copies every column's value: use this to keep a row beyond the closure that received it.
    public func copyValues() -> [DatabaseValue] {
        (0..<count).map { DatabaseValue(statement: handle, column: Int32($0)) }
    }

    @usableFromInline
    func decodingError<Value>(_ type: Value.Type, at index: Int) -> RowDecodingError {
        guard index >= 0, index < count else {
            return RowDecodingError(
                columnIndex: index, columnName: "<out of range: the row has \(count) column(s)>",
                storedValue: .null, expectedType: "\(Value.self)", sql: statement.sql)
        }
        return RowDecodingError(
            columnIndex: index, columnName: columnName(at: index),
            storedValue: value(at: index), expectedType: "\(Value.self)", sql: statement.sql)
    }
}
