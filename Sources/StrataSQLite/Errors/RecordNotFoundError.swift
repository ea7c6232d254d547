/// A row was not found where one was required.
public struct RecordNotFoundError: Error, Sendable, CustomStringConvertible {
    /// The table searched.
    public var tableName: String
    /// The primary key values searched for, in key column order.
    public var key: [DatabaseValue]

    /// Names the table and the key.
    public var description: String {
        "no row in \"\(tableName)\" with primary key \(key.map(\.description).joined(separator: ", "))"
    }
}
