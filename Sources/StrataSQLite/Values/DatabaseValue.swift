import Foundation

/// One SQLite value in one of the five storage classes.
///
/// Most code never sees a `DatabaseValue`: rows decode straight from the statement into Swift
/// types. It appears where a value's storage class is only known at run time: function
/// arguments, ``StatementArguments``, and error messages.
public enum DatabaseValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The storage class's name as SQLite spells it (`INTEGER`, `REAL`, `TEXT`, `BLOB`, `NULL`).
    public var storageClassName: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }

    /// Whether this value is SQL NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

extension DatabaseValue: CustomStringConvertible {
    /// A SQL-literal-like rendering, used in error messages and traces.
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value):
            return value.quotedSQLLiteral
        case .blob(let data):
            if data.count > 32 {
                return String(Self.blobLiteral(data.prefix(32)).dropLast()) + "…' (\(data.count) bytes)"
            }
            return Self.blobLiteral(data)
        }
    }
}
