import SwiftDiagnostics
import SwiftSyntax

/// The diagnostics `#sql` reports. Each one says what is wrong and how to fix it.
enum SQLMacroDiagnostic: DiagnosticMessage {
    case notALiteral
    case unterminatedString(excerpt: String)
    case unterminatedQuotedIdentifier(open: Character, close: Character, excerpt: String)
    case unterminatedBlockComment(excerpt: String)
    case unmatchedClosingParenthesis(excerpt: String)
    case unclosedParenthesis(excerpt: String)
    case bindParameter(String)
    case interpolationInsideQuotes(SQLLiteralValidator.Context)

    var message: String {
        switch self {
        case .notALiteral:
            "#sql takes a string literal, because its SQL is checked at compile time: write the SQL "
                + "inline (\"…\", interpolating values and expressions), or wrap a fragment built at run "
                + "time with SQLQueryExpression(fragment)"
        case .unterminatedString(let excerpt):
            "unterminated SQL string literal in `\(excerpt)`: close it with a matching ' "
                + "(write '' for a quote inside the string)"
        case .unterminatedQuotedIdentifier(let open, let close, let excerpt):
            if open == "\"" {
                "unterminated quoted identifier in `\(excerpt)`: close it with a matching \" "
                    + "(write \"\" for a quote inside the identifier)"
            } else {
                "unterminated quoted identifier in `\(excerpt)`: close the \(open)…\(close) identifier "
                    + "with a matching \(close)"
            }
        case .unterminatedBlockComment(let excerpt):
            "unterminated comment in `\(excerpt)`: close it with */"
        case .unmatchedClosingParenthesis(let excerpt):
            "unbalanced parentheses: the ')' in `\(excerpt)` has no matching '('; remove it or add the missing '('"
        case .unclosedParenthesis(let excerpt):
            "unbalanced parentheses: the '(' in `\(excerpt)` is never closed; add the missing ')'"
        case .bindParameter(let parameter):
            "raw bind parameter '\(parameter)' in #sql: interpolate the value instead, as \\(value), "
                + "which binds it as a parameter in order with the fragment's other values"
        case .interpolationInsideQuotes(let context):
            switch context {
            case .string:
                "interpolation inside a SQL string literal becomes part of the string's text (a bound "
                    + "value's '?' is not a parameter there): move it outside the quotes, for example "
                    + "'%' || \\(value) || '%', or use \\(raw:) for trusted text"
            case .quotedIdentifier:
                "interpolation inside a quoted identifier becomes part of the identifier's text: "
                    + "interpolate \\(quote: name) without the surrounding quotes, or use \\(raw:) for trusted text"
            case .comment:
                "interpolation inside a SQL comment is commented out (a bound value would leave an "
                    + "unused parameter): move it out of the comment, or use \\(raw:) for trusted text"
            }
        }
    }

    var diagnosticID: MessageID {
        let id =
            switch self {
            case .notALiteral: "notALiteral"
            case .unterminatedString: "unterminatedString"
            case .unterminatedQuotedIdentifier: "unterminatedQuotedIdentifier"
            case .unterminatedBlockComment: "unterminatedBlockComment"
            case .unmatchedClosingParenthesis: "unmatchedClosingParenthesis"
            case .unclosedParenthesis: "unclosedParenthesis"
            case .bindParameter: "bindParameter"
            case .interpolationInsideQuotes: "interpolationInsideQuotes"
            }
        return MessageID(domain: "StrataMacros.sql", id: id)
    }

    var severity: DiagnosticSeverity {
        switch self {
        case .interpolationInsideQuotes: .warning
        default: .error
        }
    }
}
