import StrataSQLite

/// A SQL expression whose value has the Swift type `QueryValue`.
///
/// Columns, bound values, operators, aggregates and function calls are all query expressions.
/// `QueryValue` is what the compiler checks: `$0.score.eq("x")` does not compile when `score`
/// is an `Int` column.
public protocol QueryExpression<QueryValue>: Sendable {
    /// The Swift type of the expression's value.
    associatedtype QueryValue
    /// The expression's SQL and bindings.
    var queryFragment: QueryFragment { get }
}

/// An expression built from SQL text, with a declared value type.
///
/// The builder's operators return these; `#sql` and ``SQLQueryExpression`` make one from text
/// you write.
public struct SQLQueryExpression<QueryValue>: QueryExpression {
    public let queryFragment: QueryFragment

    /// An expression of the fragment, declared to have the value type `QueryValue`.
    public init(_ fragment: QueryFragment, as type: QueryValue.Type = QueryValue.self) {
        queryFragment = fragment
    }
}

extension QueryExpression {
    /// The same SQL, read as another Swift type (no SQL `CAST`): for an expression whose value
    /// you know better than the builder.
    public func unsafeCoerce<Other>(_ type: Other.Type = Other.self) -> SQLQueryExpression<Other> {
        SQLQueryExpression(queryFragment)
    }
}

/// A value bound as a parameter.
public struct BindingExpression<QueryValue>: QueryExpression {
    public let queryFragment: QueryFragment

    /// The value, bound as `?`.
    public init(_ value: QueryValue) where QueryValue: DatabaseValueConvertible {
        queryFragment = QueryFragment(binding: value.databaseValue)
    }
}

extension SQLQueryExpression where QueryValue == () {
    /// Runs the SQL as a statement (or several, separated by semicolons), discarding any rows:
    /// `try #sql("CREATE INDEX …").execute(db)`.
    public func execute(_ db: Database) throws {
        try db.execute(sql: queryFragment.sql, arguments: queryFragment.statementArguments)
    }
}
