/// A type that is `Optional`: lets an optional expression compare with a non-optional one.
public protocol OptionalProtocol {
    associatedtype Wrapped
}

extension Optional: OptionalProtocol {}

func binary<Result>(_ lhs: some QueryExpression, _ op: String, _ rhs: some QueryExpression) -> SQLQueryExpression<Result> {
    var fragment = QueryFragment(verbatim: "(")
    fragment.append(lhs.queryFragment)
    fragment.append(verbatim: " \(op) ")
    fragment.append(rhs.queryFragment)
    fragment.append(verbatim: ")")
    return SQLQueryExpression(fragment)
}

extension QueryExpression {
    /// `lhs = rhs`.
    public func eq(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, "=", other) }
    /// `lhs <> rhs`.
    public func neq(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, "<>", other) }
    /// `lhs < rhs`.
    public func lt(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, "<", other) }
    /// `lhs > rhs`.
    public func gt(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, ">", other) }
    /// `lhs <= rhs`.
    public func lte(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, "<=", other) }
    /// `lhs >= rhs`.
    public func gte(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, ">=", other) }
    /// `lhs IS rhs`: equality where NULL equals NULL.
    public func `is`(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, "IS", other) }
    /// `lhs IS NOT rhs`.
    public func isNot(_ other: some QueryExpression<QueryValue>) -> SQLQueryExpression<Bool> { binary(self, "IS NOT", other) }

    /// `lhs = rhs`, with an optional right side.
    public func eq(_ other: some QueryExpression<QueryValue?>) -> SQLQueryExpression<Bool> { binary(self, "=", other) }
    /// `lhs <> rhs`, with an optional right side.
    public func neq(_ other: some QueryExpression<QueryValue?>) -> SQLQueryExpression<Bool> { binary(self, "<>", other) }
    /// `lhs IS rhs`, with an optional right side.
    public func `is`(_ other: some QueryExpression<QueryValue?>) -> SQLQueryExpression<Bool> { binary(self, "IS", other) }
    /// `lhs IS NOT rhs`, with an optional right side.
    public func isNot(_ other: some QueryExpression<QueryValue?>) -> SQLQueryExpression<Bool> { binary(self, "IS NOT", other) }
}

extension QueryExpression where QueryValue: OptionalProtocol {
    /// `lhs = rhs`, an optional left side against a non-optional right side.
    public func eq(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, "=", other) }
    /// `lhs <> rhs`, an optional left side against a non-optional right side.
    public func neq(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, "<>", other) }
    /// `lhs IS rhs`, an optional left side against a non-optional right side.
    public func `is`(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, "IS", other) }
    /// `lhs IS NOT rhs`, an optional left side against a non-optional right side.
    public func isNot(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, "IS NOT", other) }
    /// `lhs < rhs`, an optional left side against a non-optional right side.
    public func lt(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, "<", other) }
    /// `lhs > rhs`, an optional left side against a non-optional right side.
    public func gt(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, ">", other) }
    /// `lhs <= rhs`, an optional left side against a non-optional right side.
    public func lte(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, "<=", other) }
    /// `lhs >= rhs`, an optional left side against a non-optional right side.
    public func gte(_ other: some QueryExpression<QueryValue.Wrapped>) -> SQLQueryExpression<Bool> { binary(self, ">=", other) }

    /// `expression IS NULL` when passed nil: `$0.ownerID.is(nil)`.
    public func `is`(_ null: Never?) -> SQLQueryExpression<Bool> {
        SQLQueryExpression("(" + queryFragment + " IS NULL)")
    }

    /// `expression IS NOT NULL` when passed nil: `$0.ownerID.isNot(nil)`.
    public func isNot(_ null: Never?) -> SQLQueryExpression<Bool> {
        SQLQueryExpression("(" + queryFragment + " IS NOT NULL)")
    }
}

// Operators, for conditions that read like Swift: `$0.score > 10 && !$0.isArchived`.
/// `lhs = rhs`.
public func == <Value>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Bool> { lhs.eq(rhs) }
/// `lhs <> rhs`.
public func != <Value>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Bool> { lhs.neq(rhs) }
/// `lhs < rhs`.
public func < <Value>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Bool> { lhs.lt(rhs) }
/// `lhs > rhs`.
public func > <Value>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Bool> { lhs.gt(rhs) }
/// `lhs <= rhs`.
public func <= <Value>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Bool> { lhs.lte(rhs) }
/// `lhs >= rhs`.
public func >= <Value>(lhs: some QueryExpression<Value>, rhs: some QueryExpression<Value>) -> SQLQueryExpression<Bool> { lhs.gte(rhs) }
/// `expression IS NULL`.
public func == <Value: OptionalProtocol>(lhs: some QueryExpression<Value>, rhs: Never?) -> SQLQueryExpression<Bool> { lhs.is(nil) }
/// `expression IS NOT NULL`.
public func != <Value: OptionalProtocol>(lhs: some QueryExpression<Value>, rhs: Never?) -> SQLQueryExpression<Bool> { lhs.isNot(nil) }
