import StrataSQLite

/// A statement made of SQL text, for DDL the builder writes (`DROP VIEW`, `DROP TRIGGER`).
public struct SQLStatement: QueryStatement {
    public typealias QueryValue = Void
    public let statementFragment: QueryFragment

    /// A statement of this SQL.
    public init(_ fragment: QueryFragment) {
        statementFragment = fragment
    }
}
