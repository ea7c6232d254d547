import Foundation

/// SQL text cut into SQLite's tokens, enough to rewrite a `CREATE TABLE` statement in place:
/// every character of the input belongs to exactly one token, so joining the tokens gives the
/// text back, comments and spacing included.
///
/// Why a tokenizer rather than rebuilding the table from `pragma_table_xinfo`: the pragmas do
/// not report CHECK constraints, COLLATE clauses, generated expressions, conflict clauses or
/// table options, and a rebuilt table must keep all of them. Editing the original statement's
/// tokens keeps everything not edited exactly as the app wrote it.
struct SQLTokens {
    enum Kind: Equatable {
        /// A bare word: a keyword, an unquoted name, a number.
        case word
        /// `"name"`, `` `name` `` or `[name]`.
        case quotedIdentifier
        /// `'text'` (SQLite also accepts it as a name where a name is expected).
        case string
        /// One character of punctuation: `(`, `)`, `,`, `.`, operators.
        case punctuation
        /// Spaces, tabs and newlines.
        case whitespace
        /// `-- …` to the end of the line, or `/* … */`.
        case comment
    }

    struct Token: Equatable {
        var kind: Kind
        var text: String

        /// Whether this is trivia (spacing or a comment), which the grammar ignores.
        var isTrivia: Bool { kind == .whitespace || kind == .comment }

        /// Whether this is the bare keyword `keyword` (case-insensitive; quoted names never are).
        func isKeyword(_ keyword: String) -> Bool {
            kind == .word && text.sqliteFolded == keyword.sqliteFolded
        }

        /// The name this token spells, unquoted; nil for punctuation, trivia and numbers' kin.
        var name: String? {
            switch kind {
            case .word: return text
            case .quotedIdentifier, .string:
                guard let open = text.first else { return nil }
                let close: Character = open == "[" ? "]" : open
                var inner = text.dropFirst()
                if inner.last == close { inner = inner.dropLast() }
                // Brackets have no escape; the other quotes escape themselves by doubling.
                if open == "[" { return String(inner) }
                return String(inner).replacingOccurrences(of: String([close, close]), with: String(close))
            default: return nil
            }
        }
    }

    var tokens: [Token]

    init(_ sql: String) {
        tokens = []
        let scalars = Array(sql.unicodeScalars)
        var index = 0
        func text(_ range: Range<Int>) -> String {
            var result = String.UnicodeScalarView()
            result.append(contentsOf: scalars[range])
            return String(result)
        }
        while index < scalars.count {
            let start = index
            let scalar = scalars[index]
            let next = index + 1 < scalars.count ? scalars[index + 1] : nil
            let kind: Kind
            switch scalar {
            case " ", "\t", "\n", "\r", "\u{0C}":
                while index < scalars.count, [" ", "\t", "\n", "\r", "\u{0C}"].contains(scalars[index]) { index += 1 }
                kind = .whitespace
            case "-" where next == "-":
                while index < scalars.count, scalars[index] != "\n" { index += 1 }
                kind = .comment
            case "/" where next == "*":
                index += 2
                while index < scalars.count, !(scalars[index] == "*" && index + 1 < scalars.count && scalars[index + 1] == "/") {
                    index += 1
                }
                index = min(index + 2, scalars.count)
                kind = .comment
            case "\"", "`", "'":
                // A doubled quote inside is the quote itself, not the end.
                index += 1
                while index < scalars.count {
                    if scalars[index] == scalar {
                        if index + 1 < scalars.count, scalars[index + 1] == scalar {
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    index += 1
                }
                kind = scalar == "'" ? .string : .quotedIdentifier
            case "[":
                while index < scalars.count, scalars[index] != "]" { index += 1 }
                index = min(index + 1, scalars.count)
                kind = .quotedIdentifier
            default:
                if Self.isWordScalar(scalar) {
                    while index < scalars.count, Self.isWordScalar(scalars[index]) { index += 1 }
                    kind = .word
                } else {
                    index += 1
                    kind = .punctuation
                }
            }
            tokens.append(Token(kind: kind, text: text(start..<index)))
        }
    }

    /// The text back, with whatever edits were made to the tokens.
    var sql: String { tokens.map(\.text).joined() }

    /// Letters, digits, `_`, `$` and every non-ASCII character, as in SQLite's tokenizer.
    private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.value >= 0x80 { return true }
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", "$": return true
        default: return false
        }
    }

    /// The index of the next token at or after `index` that is not trivia.
    func significant(from index: Int, before end: Int? = nil) -> Int? {
        var index = index
        let end = end ?? tokens.count
        while index < end {
            if !tokens[index].isTrivia { return index }
            index += 1
        }
        return nil
    }

    /// The index of the `)` closing the `(` at `open`.
    func closing(_ open: Int) -> Int? {
        var depth = 0
        for index in open..<tokens.count where tokens[index].kind == .punctuation {
            if tokens[index].text == "(" { depth += 1 }
            if tokens[index].text == ")" {
                depth -= 1
                if depth == 0 { return index }
            }
        }
        return nil
    }
}

extension String {
    /// The name as SQLite compares names: ASCII letters fold to lower case, nothing else does.
    var sqliteFolded: String {
        guard utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return self }
        return String(
            String.UnicodeScalarView(
                unicodeScalars.map { scalar in
                    ("A"..."Z").contains(scalar) ? Unicode.Scalar(scalar.value + 32) ?? scalar : scalar
                }))
    }
}
