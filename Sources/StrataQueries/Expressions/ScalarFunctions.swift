extension QueryExpression where QueryValue == String {
    /// `length(text)`: the number of characters.
    public func length() -> SQLQueryExpression<Int> { SQLQueryExpression("length(" + queryFragment + ")") }
    /// `lower(text)`.
    public func lower() -> SQLQueryExpression<String> { SQLQueryExpression("lower(" + queryFragment + ")") }
    /// `upper(text)`.
    public func upper() -> SQLQueryExpression<String> { SQLQueryExpression("upper(" + queryFragment + ")") }
    /// `trim(text)`.
    public func trim() -> SQLQueryExpression<String> { SQLQueryExpression("trim(" + queryFragment + ")") }
}

extension QueryExpression where QueryValue: QueryNumeric {
    /// `abs(number)`.
    public func abs() -> SQLQueryExpression<QueryValue> { SQLQueryExpression("abs(" + queryFragment + ")") }
}

extension QueryExpression {
    /// `CAST(expression AS type)` read as `Other`: `.cast(as: Double.self)`.
    public func cast<Other: QueryBindable>(as type: Other.Type) -> SQLQueryExpression<Other> {
        let affinity: String
        switch Other.self {
        case is Double.Type, is Float.Type: affinity = "REAL"
        case is String.Type: affinity = "TEXT"
        case is Int.Type, is Int64.Type, is Int32.Type, is Bool.Type: affinity = "INTEGER"
        default: affinity = "BLOB"
        }
        return SQLQueryExpression("CAST(" + queryFragment + " AS " + QueryFragment(verbatim: affinity) + ")")
    }
}
