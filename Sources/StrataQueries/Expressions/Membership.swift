import StrataSQLite

extension QueryExpression {
    /// `expression IN (?, ?, …)`. An empty list matches nothing.
    public func `in`<Values: Sequence>(_ values: Values) -> SQLQueryExpression<Bool>
    where Values.Element: QueryExpression, Values.Element.QueryValue == QueryValue {
        let list = values.map(\.queryFragment)
        if list.isEmpty { return SQLQueryExpression("(" + queryFragment + " IN (NULL))") }
        return SQLQueryExpression("(" + queryFragment + " IN (" + list.joined(separator: ", ") + "))")
    }

    /// `expression IN (SELECT …)`.
    public func `in`(_ subquery: some QueryStatement<QueryValue>) -> SQLQueryExpression<Bool> {
        SQLQueryExpression("(" + queryFragment + " IN " + subquery.queryFragment + ")")
    }

    /// `expression BETWEEN lower AND upper`.
    public func between(_ lower: some QueryExpression<QueryValue>, and upper: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool>
    {
        SQLQueryExpression("(" + queryFragment + " BETWEEN " + lower.queryFragment + " AND " + upper.queryFragment + ")")
    }
}

extension QueryExpression where QueryValue: OptionalProtocol {
    /// `expression IN (?, ?, …)` for an optional expression and non-optional values.
    public func `in`<Values: Sequence>(_ values: Values) -> SQLQueryExpression<Bool>
    where Values.Element: QueryExpression, Values.Element.QueryValue == QueryValue.Wrapped {
        let list = values.map(\.queryFragment)
        if list.isEmpty { return SQLQueryExpression("(" + queryFragment + " IN (NULL))") }
        return SQLQueryExpression("(" + queryFragment + " IN (" + list.joined(separator: ", ") + "))")
    }
}

extension QueryExpression where QueryValue == String {
    /// `expression LIKE pattern` (case-insensitive for ASCII), with an optional escape character.
    public func like(_ pattern: some QueryExpression<String>, escape: Character? = nil) -> SQLQueryExpression<Bool> {
        var fragment = "(" + queryFragment + " LIKE " + pattern.queryFragment
        if let escape { fragment += " ESCAPE " + QueryFragment(binding: .text(String(escape))) }
        return SQLQueryExpression(fragment + ")")
    }

    /// `expression GLOB pattern` (case-sensitive, `*` and `?` wildcards).
    public func glob(_ pattern: some QueryExpression<String>) -> SQLQueryExpression<Bool> { binary(self, "GLOB", pattern) }

    /// Whether the text contains `other`, matched with `instr` (case-sensitive, no wildcards).
    public func contains(_ other: some QueryExpression<String>) -> SQLQueryExpression<Bool> {
        SQLQueryExpression("(instr(" + queryFragment + ", " + other.queryFragment + ") > 0)")
    }

    /// Whether the text starts with `prefix`, without wildcard surprises.
    public func hasPrefix(_ prefix: some QueryExpression<String>) -> SQLQueryExpression<Bool> {
        SQLQueryExpression("(substr(" + queryFragment + ", 1, length(" + prefix.queryFragment + ")) = " + prefix.queryFragment + ")")
    }
}

extension QueryExpression where QueryValue == String? {
    /// `expression LIKE pattern` on an optional text (NULL never matches).
    public func like(_ pattern: some QueryExpression<String>) -> SQLQueryExpression<Bool> { binary(self, "LIKE", pattern) }
}

extension QueryStatement {
    /// `EXISTS (SELECT …)`.
    public func exists() -> SQLQueryExpression<Bool> {
        SQLQueryExpression("EXISTS " + queryFragment)
    }
}
