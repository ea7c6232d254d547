/// A numeric column type: arithmetic and `sum`/`avg` apply.
public protocol QueryNumeric {}
extension Int: QueryNumeric {}
extension Int64: QueryNumeric {}
extension Int32: QueryNumeric {}
extension Int16: QueryNumeric {}
extension Int8: QueryNumeric {}
extension UInt32: QueryNumeric {}
extension UInt16: QueryNumeric {}
extension UInt8: QueryNumeric {}
extension Double: QueryNumeric {}
extension Float: QueryNumeric {}
extension Optional: QueryNumeric where Wrapped: QueryNumeric {}

/// `lhs + rhs`.
public func + <Value: QueryNumeric>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Value> {
    binary(lhs, "+", rhs)
}
/// `lhs - rhs`.
public func - <Value: QueryNumeric>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Value> {
    binary(lhs, "-", rhs)
}
/// `lhs * rhs`.
public func * <Value: QueryNumeric>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Value> {
    binary(lhs, "*", rhs)
}
/// `lhs / rhs` (integer division for integers, as in SQLite).
public func / <Value: QueryNumeric>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Value> {
    binary(lhs, "/", rhs)
}
/// `lhs % rhs`.
public func % <Value: QueryNumeric>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Value> {
    binary(lhs, "%", rhs)
}
/// `-expression`.
public prefix func - <Value: QueryNumeric>(expression: some QueryExpression<Value>) -> SQLQueryExpression<Value> {
    SQLQueryExpression("(-" + expression.queryFragment + ")")
}

extension QueryExpression where QueryValue == String {
    /// `lhs || rhs`: string concatenation.
    public func concat(_ other: some QueryExpression<String>) -> SQLQueryExpression<String> { binary(self, "||", other) }
}

/// `lhs || rhs`: string concatenation.
public func + (lhs: some QueryExpression<String>, rhs: some QueryExpression<String>) -> SQLQueryExpression<String> { lhs.concat(rhs) }
