/// Where NULLs sort: `NULLS FIRST` / `NULLS LAST`.
public enum NullOrdering: String, Sendable {
    case first = "NULLS FIRST"
    case last = "NULLS LAST"
}

/// A sort term: `expression ASC|DESC [NULLS FIRST|LAST]`.
public struct OrderingTerm: QueryExpression {
    public typealias QueryValue = Void
    public let queryFragment: QueryFragment
}

extension QueryExpression {
    /// Ascending order: `expression ASC`.
    public func asc(nulls: NullOrdering? = nil) -> OrderingTerm {
        OrderingTerm(queryFragment: queryFragment + QueryFragment(verbatim: " ASC" + (nulls.map { " " + $0.rawValue } ?? "")))
    }

    /// Descending order: `expression DESC`.
    public func desc(nulls: NullOrdering? = nil) -> OrderingTerm {
        OrderingTerm(queryFragment: queryFragment + QueryFragment(verbatim: " DESC" + (nulls.map { " " + $0.rawValue } ?? "")))
    }

    /// `expression COLLATE name`: `.collate("NOCASE")` sorts and compares ignoring ASCII case.
    public func collate(_ collation: String) -> SQLQueryExpression<QueryValue> {
        SQLQueryExpression(queryFragment + QueryFragment(verbatim: " COLLATE " + collation.quotedIdentifier))
    }
}
