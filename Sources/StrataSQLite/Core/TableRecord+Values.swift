extension TableRecord {
    /// The record's column values, in ``columnNames`` order, as ``encodeColumns(to:)`` appends
    /// them.
    ///
    /// For code that builds its own statements around records, such as a multi-row
    /// `INSERT … VALUES (…), (…)` that binds the values of many records at once. Throws what
    /// `encodeColumns(to:)` throws, and a ``DatabaseError`` (`SQLITE_MISUSE`) when it appends a
    /// number of values other than the number of columns.
    public func databaseValues() throws -> [DatabaseValue] {
        var encoder = ColumnEncoder()
        try encodeColumns(to: &encoder)
        let values = encoder.captured ?? []
        guard values.count == Self.columnNames.count else {
            throw DatabaseError(
                resultCode: .misuse,
                message: "\(Self.self).encodeColumns appended \(values.count) value(s) for \(Self.columnNames.count) column(s)")
        }
        return values
    }
}
