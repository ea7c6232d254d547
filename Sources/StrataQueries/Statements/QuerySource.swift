/// What a `FROM` or `JOIN` reads: a table, or an optional table for the right side of a
/// `LEFT JOIN`, whose columns are all nullable.
public protocol QuerySource {
    associatedtype TableColumns: Sendable
    /// The columns passed to query closures.
    static var columns: TableColumns { get }
    /// The table's name, unquoted.
    static var tableName: String { get }
    /// How many columns a row of the source decodes from.
    static var columnCount: Int { get }
}

extension Optional: QuerySource where Wrapped: Table {
    public typealias TableColumns = NullableColumns<Wrapped>
    public static var columns: NullableColumns<Wrapped> { NullableColumns() }
    public static var tableName: String { Wrapped.tableName }
}
