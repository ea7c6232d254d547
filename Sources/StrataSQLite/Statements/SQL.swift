/// SQL text whose interpolated values become bound parameters, never spliced text.
///
/// ```swift
/// try db.execute("UPDATE players SET score = \(score) WHERE id = \(id)")
/// // executes `UPDATE players SET score = ? WHERE id = ?` with arguments [score, id]
/// let players = try Player.fetchAll(db, "SELECT * FROM players WHERE id IN (\(list: ids))")
/// ```
///
/// Only three things can be interpolated: a value (bound as `?`), a list of values (bound as
/// `?, ?, …`), an identifier (`\(identifier: name)`, quoted as `"name"`), and another `SQL`
/// fragment, whose text and arguments are appended. There is deliberately no way to splice an
/// arbitrary string.
public struct SQL: Sendable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The SQL text, with `?` for every interpolated value.
    public private(set) var text: String
    /// The interpolated values, in order.
    public private(set) var arguments: [any DatabaseValueConvertible]

    /// SQL text without arguments, from a string literal.
    public init(stringLiteral value: String) {
        text = value
        arguments = []
    }

    /// SQL text whose interpolated values became `?` arguments.
    public init(stringInterpolation: StringInterpolation) {
        text = stringInterpolation.text
        arguments = stringInterpolation.arguments
    }

    /// SQL text without arguments, from a string that is not a literal.
    ///
    /// Use it for text you control (for example generated DDL); never for user input.
    public init(verbatim text: String) {
        self.text = text
        arguments = []
    }

    /// The arguments, in the form `execute(sql:arguments:)` takes.
    public var statementArguments: StatementArguments { StatementArguments(arguments) }

    /// The text, with `?` where values were interpolated.
    public var description: String { text }

    /// The two texts joined, arguments kept in order.
    public static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.text += rhs.text
        result.arguments += rhs.arguments
        return result
    }

    /// Builds ``SQL`` from an interpolated literal: values become arguments, never text.
    public struct StringInterpolation: StringInterpolationProtocol {
        var text = ""
        var arguments: [any DatabaseValueConvertible] = []

        /// Reserves room for the literal parts and the values.
        public init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount)
            arguments.reserveCapacity(interpolationCount)
        }

        /// Appends literal SQL text.
        public mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        /// Binds a value.
        public mutating func appendInterpolation(_ value: some DatabaseValueConvertible) {
            text += "?"
            arguments.append(value)
        }

        /// Binds each value of a list, separated by commas: `IN (\(list: ids))`.
        /// An empty list becomes `NULL`, so `x IN (NULL)` matches nothing instead of failing to parse.
        public mutating func appendInterpolation<Value: DatabaseValueConvertible>(list values: some Sequence<Value>) {
            var first = true
            for value in values {
                text += first ? "?" : ", ?"
                arguments.append(value)
                first = false
            }
            if first { text += "NULL" }
        }

        /// Quotes an identifier: `"name"`, with embedded quotes doubled.
        public mutating func appendInterpolation(identifier: String) {
            text += identifier.quotedIdentifier
        }

        /// Appends a fragment with its arguments.
        public mutating func appendInterpolation(_ fragment: SQL) {
            text += fragment.text
            arguments += fragment.arguments
        }
    }
}
