extension QueryExpression where QueryValue == Bool {
    /// `lhs AND rhs`.
    public func and(_ other: some QueryExpression<Bool>) -> SQLQueryExpression<Bool> { binary(self, "AND", other) }
    /// `lhs OR rhs`.
    public func or(_ other: some QueryExpression<Bool>) -> SQLQueryExpression<Bool> { binary(self, "OR", other) }
    /// `NOT expression`.
    public func not() -> SQLQueryExpression<Bool> { SQLQueryExpression("(NOT " + queryFragment + ")") }
}

/// `lhs AND rhs`.
public func && (lhs: some QueryExpression<Bool>, rhs: some QueryExpression<Bool>) -> SQLQueryExpression<Bool> { lhs.and(rhs) }
/// `lhs OR rhs`.
public func || (lhs: some QueryExpression<Bool>, rhs: some QueryExpression<Bool>) -> SQLQueryExpression<Bool> { lhs.or(rhs) }
/// `NOT expression`.
public prefix func ! (expression: some QueryExpression<Bool>) -> SQLQueryExpression<Bool> { expression.not() }
