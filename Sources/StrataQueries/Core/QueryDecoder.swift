import StrataSQLite

/// Reads the columns of a row one after another, by index.
///
/// Generated `init(decoder:)` implementations call `decode` once per column in selection
/// order; a table nested in a selection reads its columns where the previous value stopped.
public struct QueryDecoder {
    /// The row being read.
    public let row: Row
    /// The 0-based index of the next column to read.
    public var columnIndex: Int

    @inlinable
    /// A decoder that reads `row` from `columnIndex` on.
    public init(row: Row, columnIndex: Int = 0) {
        self.row = row
        self.columnIndex = columnIndex
    }

    /// Reads the next column.
    @inlinable @inline(__always)
    public mutating func decode<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self) throws -> Value {
        let index = columnIndex
        columnIndex = index + 1
        return try row.decode(Value.self, at: index)
    }

    /// Reads the next column through a representation (`@Column(as:)`): its stored form, then
    /// the Swift value it stands for.
    @inlinable @inline(__always)
    public mutating func decode<Representation: QueryRepresentable>(
        as representation: Representation.Type
    ) throws -> Representation.QueryOutput {
        try decode(Representation.self).queryOutput
    }

    /// Reads the next value of any decodable type: a column, a table's columns, a selection.
    @inlinable
    public mutating func read<Value: QueryDecodable>(_ type: Value.Type = Value.self) throws -> Value {
        try Value(decoder: &self)
    }

    /// Whether the next `count` columns are all NULL: a left-joined table with no match.
    public func nextColumnsAreNull(_ count: Int) -> Bool {
        for index in columnIndex..<(columnIndex + count) where !row.isNull(at: index) {
            return false
        }
        return true
    }
}

/// A type read from consecutive columns of a row.
///
/// Columns types (`Int`, `String`, …) read one column; a `@Table` reads one column per
/// property; a `@Selection` reads its fields in order.
public protocol QueryDecodable {
    /// How many columns the type reads.
    static var columnCount: Int { get }
    init(decoder: inout QueryDecoder) throws
}

extension QueryDecodable {
    public static var columnCount: Int { 1 }
}

extension QueryDecodable where Self: DatabaseValueConvertible {
    @inlinable
    public init(decoder: inout QueryDecoder) throws {
        self = try decoder.decode(Self.self)
    }
}

extension Optional: QueryDecodable where Wrapped: QueryDecodable {
    public static var columnCount: Int { Wrapped.columnCount }

    /// A single column decodes NULL as nil; a multi-column value (a left-joined table) is nil
    /// when every one of its columns is NULL.
    @inlinable
    public init(decoder: inout QueryDecoder) throws {
        let count = Wrapped.columnCount
        if decoder.nextColumnsAreNull(count) {
            decoder.columnIndex += count
            self = nil
        } else {
            self = try Wrapped(decoder: &decoder)
        }
    }
}

extension FetchableRecord where Self: QueryDecodable {
    // The fast path for tables and selections: the generated `init(decoder:)` reads each
    // column by index. Inlinable so the witness for a concrete type specializes it in the
    // type's module.
    @inlinable
    public init(row: Row) throws {
        var decoder = QueryDecoder(row: row)
        try self.init(decoder: &decoder)
    }
}
