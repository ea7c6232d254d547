extension QueryExpression where QueryValue: OptionalProtocol {
    /// `ifnull(expression, fallback)`: the value, or `fallback` when it is NULL.
    ///
    /// ```swift
    /// $1.score.ifnull(0)                 // Int
    /// $2.isShared.ifnull(false)          // Bool
    /// ```
    public func ifnull(_ fallback: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<QueryValue.Wrapped> {
        SQLQueryExpression("ifnull(" + queryFragment + ", " + fallback.queryFragment + ")")
    }

    /// `ifnull(expression, fallback)` with an optional fallback.
    public func ifnull(_ fallback: some QueryExpression<QueryValue>) -> SQLQueryExpression<QueryValue> {
        SQLQueryExpression("ifnull(" + queryFragment + ", " + fallback.queryFragment + ")")
    }

    /// Transforms the value when it is not NULL; NULL stays NULL:
    /// `CASE WHEN x IS NULL THEN NULL ELSE transform(x) END`.
    ///
    /// ```swift
    /// $0.dueDate.map { $0 < now }        // Bool?
    /// ```
    public func map<Result>(
        _ transform: (SQLQueryExpression<QueryValue.Wrapped>) -> some QueryExpression<Result>
    ) -> SQLQueryExpression<Result?> {
        let wrapped = SQLQueryExpression<QueryValue.Wrapped>(queryFragment)
        return SQLQueryExpression(
            "CASE WHEN " + queryFragment + " IS NULL THEN NULL ELSE " + transform(wrapped).queryFragment + " END")
    }

    /// Like ``map(_:)`` for a transform that is itself optional.
    public func flatMap<Result>(
        _ transform: (SQLQueryExpression<QueryValue.Wrapped>) -> some QueryExpression<Result?>
    ) -> SQLQueryExpression<Result?> {
        let wrapped = SQLQueryExpression<QueryValue.Wrapped>(queryFragment)
        return SQLQueryExpression(
            "CASE WHEN " + queryFragment + " IS NULL THEN NULL ELSE " + transform(wrapped).queryFragment + " END")
    }
}

extension QueryExpression {
    /// `coalesce(expression, other, …)`.
    public func coalesce<Other: QueryExpression>(_ others: Other...) -> SQLQueryExpression<QueryValue>
    where Other.QueryValue == QueryValue {
        SQLQueryExpression("coalesce(" + ([queryFragment] + others.map { $0.queryFragment }).joined(separator: ", ") + ")")
    }
}
