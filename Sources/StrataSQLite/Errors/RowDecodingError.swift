/// A column of a fetched row could not be decoded into the requested Swift type.
///
/// It names the column by index and name, the value that was found, the type that was asked
/// for, and the SQL of the statement, so a schema mismatch is found without a debugger:
/// `could not decode column 2 "score" (NULL) as Int — in SELECT "id", "name", "score" FROM "players"`.
public struct RowDecodingError: Error, Sendable, CustomStringConvertible {
    /// The column's position in the row, from 0 (-1 when a name matched no column).
    public var columnIndex: Int
    /// The column's name in the result.
    public var columnName: String
    /// The value that was stored (TEXT and BLOB values are shortened).
    public var storedValue: DatabaseValue
    /// The Swift type that was requested.
    public var expectedType: String
    /// The statement's SQL.
    public var sql: String

    /// The column, the stored value, the requested type and the SQL, on one line.
    public var description: String {
        "could not decode column \(columnIndex) \"\(columnName)\" (\(storedValue.storageClassName) \(storedValue)) as \(expectedType) — in `\(sql)`"
    }
}
