extension QueryExpression {
    /// `count(expression)`: the number of non-NULL values; `distinct: true` counts each value
    /// once.
    public func count(distinct: Bool = false) -> SQLQueryExpression<Int> {
        SQLQueryExpression("count(" + (distinct ? "DISTINCT " : "") + queryFragment + ")")
    }

    /// `max(expression)`: NULL when there are no rows.
    public func max() -> SQLQueryExpression<QueryValue?> { SQLQueryExpression("max(" + queryFragment + ")") }

    /// `min(expression)`: NULL when there are no rows.
    public func min() -> SQLQueryExpression<QueryValue?> { SQLQueryExpression("min(" + queryFragment + ")") }

    /// `group_concat(expression, separator)`: NULL when there are no rows.
    public func groupConcat(separator: String = ",", distinct: Bool = false) -> SQLQueryExpression<String?> {
        if distinct {
            // SQLite allows DISTINCT only with the default separator in the one-argument form.
            return SQLQueryExpression("group_concat(DISTINCT " + queryFragment + ")")
        }
        return SQLQueryExpression("group_concat(" + queryFragment + ", " + QueryFragment(binding: .text(separator)) + ")")
    }
}

extension QueryExpression where QueryValue: QueryNumeric {
    /// `sum(expression)`: NULL when there are no rows (use `total()` for 0.0).
    public func sum(distinct: Bool = false) -> SQLQueryExpression<QueryValue?> {
        SQLQueryExpression("sum(" + (distinct ? "DISTINCT " : "") + queryFragment + ")")
    }

    /// `total(expression)`: the sum as a Double, 0.0 when there are no rows.
    public func total() -> SQLQueryExpression<Double> { SQLQueryExpression("total(" + queryFragment + ")") }

    /// `avg(expression)`: NULL when there are no rows.
    public func avg(distinct: Bool = false) -> SQLQueryExpression<Double?> {
        SQLQueryExpression("avg(" + (distinct ? "DISTINCT " : "") + queryFragment + ")")
    }
}

extension PrimaryKeyedTableDefinition {
    /// `count("table"."id")`: the number of rows of this table in each group (0 for a
    /// left-joined table without a match).
    public func count(distinct: Bool = false) -> SQLQueryExpression<Int> {
        primaryKey.count(distinct: distinct)
    }
}

extension NullableColumns where Base: PrimaryKeyedTable {
    /// `count("table"."id")`: 0 in a group where the left-joined table had no match.
    public func count(distinct: Bool = false) -> SQLQueryExpression<Int> {
        Base.columns.primaryKey.count(distinct: distinct)
    }
}

/// `count(*)`: the number of rows.
public struct CountAll: QueryExpression {
    public typealias QueryValue = Int
    /// `count(*)`.
    public init() {}
    public var queryFragment: QueryFragment { "count(*)" }
}

extension QueryExpression where QueryValue: OptionalProtocol {
    /// `max(expression)` of an optional expression stays singly optional.
    public func max() -> SQLQueryExpression<QueryValue> { SQLQueryExpression("max(" + queryFragment + ")") }

    /// `min(expression)` of an optional expression stays singly optional.
    public func min() -> SQLQueryExpression<QueryValue> { SQLQueryExpression("min(" + queryFragment + ")") }
}

extension QueryExpression where QueryValue: OptionalProtocol & QueryNumeric {
    /// `sum(expression)` of an optional expression stays singly optional.
    public func sum(distinct: Bool = false) -> SQLQueryExpression<QueryValue> {
        SQLQueryExpression("sum(" + (distinct ? "DISTINCT " : "") + queryFragment + ")")
    }
}
