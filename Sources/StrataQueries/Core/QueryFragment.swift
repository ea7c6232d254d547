import StrataSQLite

/// A piece of SQL text with the values it binds, in order.
///
/// Every query the builder makes is a `QueryFragment`: its text uses `?` for each binding, so
/// the same query shape always has the same text and hits the prepared-statement cache.
public struct QueryFragment: Sendable, Hashable, CustomStringConvertible {
    /// The SQL text, with `?` for every binding.
    public var sql: String
    /// The values bound to the `?` placeholders, in order.
    public var bindings: [DatabaseValue]

    /// SQL text with `?` placeholders and the values they bind, in order.
    public init(sql: String = "", bindings: [DatabaseValue] = []) {
        self.sql = sql
        self.bindings = bindings
    }

    /// Text you control (keywords, generated identifiers). Never user input.
    public init(verbatim sql: String) {
        self.sql = sql
        bindings = []
    }

    /// A bound value: `?`.
    public init(binding value: DatabaseValue) {
        sql = "?"
        bindings = [value]
    }

    /// An identifier, double-quoted with embedded quotes doubled: `"name"`.
    public init(quoting identifier: String) {
        sql = identifier.quotedIdentifier
        bindings = []
    }

    /// Whether there is no SQL text.
    public var isEmpty: Bool { sql.isEmpty }

    public var description: String { sql }

    /// Appends another fragment's text and bindings.
    public mutating func append(_ other: QueryFragment) {
        sql += other.sql
        bindings += other.bindings
    }

    /// Appends text you control (keywords, quoted identifiers). Never user input.
    public mutating func append(verbatim text: String) {
        sql += text
    }

    /// The two fragments, one after the other.
    public static func + (lhs: QueryFragment, rhs: QueryFragment) -> QueryFragment {
        var result = lhs
        result.append(rhs)
        return result
    }

    public static func += (lhs: inout QueryFragment, rhs: QueryFragment) {
        lhs.append(rhs)
    }

    /// The bindings as statement arguments.
    public var statementArguments: StatementArguments {
        StatementArguments(bindings)
    }
}

extension Sequence where Element == QueryFragment {
    /// The fragments joined by a separator: `a, b, c`.
    public func joined(separator: String) -> QueryFragment {
        var result = QueryFragment()
        var first = true
        for fragment in self {
            if !first { result.sql += separator }
            result.append(fragment)
            first = false
        }
        return result
    }
}

extension QueryFragment: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) {
        self.init(sql: value)
    }

    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.fragment
    }

    /// What `#sql` and `QueryFragment` literals can interpolate. Values are always bound;
    /// raw text needs the explicit `raw:` label.
    public struct StringInterpolation: StringInterpolationProtocol {
        public var fragment = QueryFragment()

        public init(literalCapacity: Int, interpolationCount: Int) {
            fragment.sql.reserveCapacity(literalCapacity + interpolationCount * 8)
        }

        public mutating func appendLiteral(_ literal: String) {
            fragment.sql += literal
        }

        /// An expression's SQL: a column, an operator, a bound literal (`\(10)` binds `?`).
        public mutating func appendInterpolation(_ expression: some QueryExpression) {
            fragment.append(expression.queryFragment)
        }

        /// A fragment's SQL and bindings.
        public mutating func appendInterpolation(_ other: QueryFragment) {
            fragment.append(other)
        }

        /// A value bound as `?`.
        public mutating func appendInterpolation(bind value: some DatabaseValueConvertible) {
            fragment.append(QueryFragment(binding: value.databaseValue))
        }

        /// A quoted identifier: `"name"`.
        public mutating func appendInterpolation(quote identifier: String) {
            fragment.sql += identifier.quotedIdentifier
        }

        /// A table's quoted name.
        public mutating func appendInterpolation<T: Table>(_ table: T.Type) {
            fragment.append(T.tableFragment)
        }

        /// Text spliced as is. Never pass user input: it is not escaped.
        public mutating func appendInterpolation(raw text: String) {
            fragment.sql += text
        }
    }
}
