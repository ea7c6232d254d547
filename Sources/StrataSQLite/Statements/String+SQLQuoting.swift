// The one place SQL text quotes names and strings: every module writes identifiers and
// literals through these, so the escaping rules live once.

extension String {
    // On every column of every query the builder writes: Foundation's replacingOccurrences
    // cost 77% of a key lookup, so the common case (no quote inside) only concatenates.
    /// The string as a quoted SQL identifier: `"name"`, with embedded double quotes doubled.
    public var quotedIdentifier: String {
        quoted(by: "\"")
    }

    /// The string as a SQL string literal: `'text'`, with embedded single quotes doubled. For
    /// text that must be spelled out where parameters cannot be bound (trigger bodies, views).
    package var quotedSQLLiteral: String {
        quoted(by: "'")
    }

    private func quoted(by quote: Unicode.Scalar) -> String {
        var result = String(quote)
        if utf8.contains(UInt8(ascii: quote)) {
            for scalar in unicodeScalars {
                result.unicodeScalars.append(scalar)
                if scalar == quote { result.unicodeScalars.append(scalar) }
            }
        } else {
            result += self
        }
        result.unicodeScalars.append(quote)
        return result
    }
}
