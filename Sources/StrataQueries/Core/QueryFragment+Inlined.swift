import StrataSQLite

extension QueryFragment {
    /// The SQL with every binding written as a literal, for statements SQLite cannot bind:
    /// "Parameters are not allowed in views" (and in trigger bodies, checked at CREATE time).
    ///
    /// Only `?` outside quoted text, quoted identifiers and comments is a binding, which is
    /// how SQLite's tokenizer reads it too.
    public var inlinedSQL: String {
        var result = ""
        result.reserveCapacity(sql.utf8.count + bindings.count * 8)
        var next = bindings.makeIterator()
        var quote: Character?
        var inLineComment = false
        var inBlockComment = false
        var previous: Character?
        for character in sql {
            defer { previous = character }
            if inLineComment {
                if character == "\n" { inLineComment = false }
                result.append(character)
                continue
            }
            if inBlockComment {
                if previous == "*", character == "/" { inBlockComment = false }
                result.append(character)
                continue
            }
            if let open = quote {
                if character == open || (open == "[" && character == "]") { quote = nil }
                result.append(character)
                continue
            }
            switch character {
            case "'", "\"", "`", "[":
                quote = character
                result.append(character)
            case "-" where previous == "-":
                inLineComment = true
                result.append(character)
            case "*" where previous == "/":
                inBlockComment = true
                result.append(character)
            case "?":
                result += next.next().map(\.sqlLiteral) ?? "NULL"
            default:
                result.append(character)
            }
        }
        return result
    }
}
