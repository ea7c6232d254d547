import StrataSQLite

/// A column of any table, type-erased: its name and qualified SQL.
public protocol TableColumnExpression: Sendable {
    /// The column's name, unquoted.
    var name: String { get }
    /// The table's name, unquoted.
    var tableName: String { get }
    /// `"table"."column"`.
    var queryFragment: QueryFragment { get }
}

/// A column of `Root` whose values have the Swift type `Value` (its stored representation
/// for `@Column(as:)` columns). Written qualified: `"players"."score"`.
public struct TableColumn<Root: Table, Value>: QueryExpression, TableColumnExpression {
    public typealias QueryValue = Value

    /// The column's name, unquoted.
    public let name: String
    /// `"table"."column"`, quoted once: columns are written into every query that uses them.
    // Never schema-qualified: SQLite matches `"table"."column"` against a FROM of
    // `"schema"."table"`, and the two-part form also works where the table is named alone (a
    // trigger step's target, `excluded`).
    private let qualifiedSQL: String

    /// The column of `Root` with this name (what `@Table` writes for each property).
    public init(_ name: String) {
        self.name = name
        qualifiedSQL = Root.tableName.quotedIdentifier + "." + name.quotedIdentifier
    }

    public var tableName: String { Root.tableName }

    public var queryFragment: QueryFragment {
        QueryFragment(verbatim: qualifiedSQL)
    }

    /// The column's name alone, unqualified: for `INSERT` and `UPDATE … SET` lists.
    public var unqualifiedFragment: QueryFragment {
        QueryFragment(verbatim: name.quotedIdentifier)
    }
}
