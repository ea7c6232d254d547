/// A row was not found where one was required.
public struct RecordNotFoundError: Error, Sendable, CustomStringConvertible {
    public var tableName: String
    public var key: [DatabaseValue]

    public var description: String {
        "no row in \"\(tableName)\" with primary key \(key.map(\.description).joined(separator: ", "))"
    }
}
