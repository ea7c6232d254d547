extension TableRecord {
    /// The record's column values, in ``columnNames`` order, as ``encodeColumns(to:)`` appends
    /// them.
    ///
    /// For code that builds its own statements around records, such as a multi-row
    /// `INSERT … VALUES (…), (…)` that binds the values of many records at once. Throws what
    /// `encodeColumns(to:)` throws, and a ``DatabaseError`` (`SQLITE_MISUSE`) when it appends a
    /// number of values other than the number of columns.
    public func databaseValues() throws -> [DatabaseValue] {
        try Self.encodedColumnValues { try encodeColumns(to: &$0) }
    }

    /// The values `encode` appends for this table's columns: a record's, or a draft's that
    /// writes the same columns. Throws what the encoding throws, and a misuse error when it
    /// appends the wrong number of values, since every statement binds columns by position.
    package static func encodedColumnValues(_ encode: (inout ColumnEncoder) throws -> Void) throws -> [DatabaseValue] {
        var encoder = ColumnEncoder()
        try encode(&encoder)
        let values = encoder.capturedValues
        guard values.count == columnNames.count else {
            throw DatabaseError(
                resultCode: .misuse,
                message: "\(Self.self).encodeColumns appended \(values.count) value(s) for \(columnNames.count) column(s) \(columnNames)")
        }
        return values
    }
}
