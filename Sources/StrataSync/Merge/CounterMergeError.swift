/// A counter column (``MergePolicy/counter(table:column:)``) holds or would hold a value the
/// engine cannot add. Each case names the table, the column and the row.
public enum CounterMergeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sum of the devices' contributions does not fit an `Int64`.
    case overflow(table: String, column: String, primaryKey: String)
    /// The column holds a value that is not an integer (text, a fraction, a BLOB).
    case notAnInteger(table: String, column: String, primaryKey: String, value: String)
    /// The counter state a record carries or the metadatabase holds does not decode.
    case malformedState(table: String, column: String, primaryKey: String, detail: String)

    /// Names the table, column and row, and what is wrong.
    public var description: String {
        switch self {
        case .overflow(let table, let column, let key):
            "counter \"\(table)\".\"\(column)\" of row \(key): the sum of the devices' changes does not fit a 64-bit integer"
        case .notAnInteger(let table, let column, let key, let value):
            "counter \"\(table)\".\"\(column)\" of row \(key) holds \(value), which is not an integer"
        case .malformedState(let table, let column, let key, let detail):
            "counter \"\(table)\".\"\(column)\" of row \(key): its per-device state is unreadable (\(detail))"
        }
    }
}
