import SwiftDiagnostics
import SwiftSyntax

/// Checks the static text of a `#sql` string literal.
///
/// The literal is read as SQLite tokenizes SQL, with each interpolation an opaque operand:
///
/// - `'…'` strings (`''` is a quote inside one), `"…"`, `` `…` `` and `[…]` quoted identifiers,
///   and `/* … */` comments must be closed; a `--` comment runs to the end of the line.
/// - Parentheses outside strings, identifiers and comments must balance.
/// - Bind parameters (`?`, `?NNN`, `:name`, `@name`, `$name`) are errors: values are bound by
///   interpolating them, which keeps the fragment's bindings in order.
/// - An interpolation inside a string, quoted identifier or comment is a warning unless it is
///   `\(raw:)`: whatever it splices (a bound value's `?`) is text there, not SQL.
///
/// Swift escapes are resolved first (`\"` is a double quote, `\n` ends a `--` comment), also in
/// raw (`#"…"#`) and multi-line literals.
enum SQLLiteralValidator {
    /// Where in the SQL an interpolation appears.
    enum Context: Equatable {
        case string
        case quotedIdentifier
        case comment
    }

    enum Element {
        /// A character, where it is in the source, and the segment of the literal that holds it.
        case scalar(Unicode.Scalar, AbsolutePosition, StringSegmentSyntax)
        case interpolation(ExpressionSegmentSyntax)
    }

    static func diagnostics(for literal: StringLiteralExprSyntax) -> [Diagnostic] {
        let elements = elements(of: literal)
        var diagnostics: [Diagnostic] = []
        /// Reports a problem at the character `elements[index]`.
        func report(_ message: (_ excerpt: String) -> SQLMacroDiagnostic, at index: Int) {
            guard case .scalar(_, let position, let segment) = elements[index] else { return }
            // The position points at the offending character. The compiler places a macro's
            // diagnostic at its node, so the node is the segment that holds the character (a
            // line of a multi-line literal, the text between two interpolations), and the
            // message quotes the text there; no highlight, as the segment is longer than the
            // problem.
            diagnostics.append(
                Diagnostic(node: segment, position: position, message: message(excerpt(at: index)), highlights: [])
            )
        }
        /// The SQL around `elements[index]` on its line: up to 8 characters before it and 12
        /// from it, interpolations shown as `\(…)`.
        func excerpt(at index: Int) -> String {
            func text(of element: Element) -> String? {
                switch element {
                case .scalar(let scalar, _, _): scalar == "\n" || scalar == "\r" ? nil : String(scalar)
                case .interpolation: "\\(…)"
                }
            }
            var before = ""
            var cursor = index - 1
            while cursor >= 0, index - cursor <= 8, let piece = text(of: elements[cursor]) {
                before = piece + before
                cursor -= 1
            }
            if cursor >= 0, index - cursor > 8, text(of: elements[cursor]) != nil { before = "…" + before }
            var after = ""
            cursor = index
            while cursor < elements.count, cursor - index < 12, let piece = text(of: elements[cursor]) {
                after += piece
                cursor += 1
            }
            if cursor < elements.count, cursor - index >= 12, text(of: elements[cursor]) != nil { after += "…" }
            return (before + after).trimmingSpaces
        }

        enum State {
            case normal
            /// In a `'…'` string that opened at `elements[start]`.
            case string(start: Int)
            case quotedIdentifier(open: Unicode.Scalar, close: Unicode.Scalar, start: Int)
            case lineComment
            case blockComment(start: Int)
        }
        var state = State.normal
        var openParentheses: [Int] = []
        var previousIsIdentifierCharacter = false

        func scalar(at index: Int) -> Unicode.Scalar? {
            guard index < elements.count, case .scalar(let scalar, _, _) = elements[index] else { return nil }
            return scalar
        }

        var index = 0
        while index < elements.count {
            let elementIndex = index
            index += 1
            switch elements[elementIndex] {
            case .interpolation(let segment):
                let context: Context? =
                    switch state {
                    case .normal: nil
                    case .string: .string
                    case .quotedIdentifier: .quotedIdentifier
                    case .lineComment, .blockComment: .comment
                    }
                if let context, segment.expressions.first?.label?.text != "raw" {
                    diagnostics.append(
                        Diagnostic(node: segment, message: SQLMacroDiagnostic.interpolationInsideQuotes(context))
                    )
                }
                previousIsIdentifierCharacter = false

            case .scalar(let character, _, _):
                switch state {
                case .normal:
                    switch character {
                    case "'":
                        state = .string(start: elementIndex)
                    case "\"", "`":
                        state = .quotedIdentifier(open: character, close: character, start: elementIndex)
                    case "[":
                        state = .quotedIdentifier(open: "[", close: "]", start: elementIndex)
                    case "-" where scalar(at: index) == "-":
                        state = .lineComment
                        index += 1
                    case "/" where scalar(at: index) == "*":
                        state = .blockComment(start: elementIndex)
                        index += 1
                    case "(":
                        openParentheses.append(elementIndex)
                    case ")":
                        if openParentheses.popLast() == nil {
                            report(SQLMacroDiagnostic.unmatchedClosingParenthesis, at: elementIndex)
                        }
                    case "?":
                        var parameter = "?"
                        while let next = scalar(at: index), next.properties.numericType == .decimal, next.isASCII {
                            parameter.unicodeScalars.append(next)
                            index += 1
                        }
                        report({ _ in .bindParameter(parameter) }, at: elementIndex)
                    case ":", "@", "$":
                        // `$` continues an identifier (`a$b`); after anything else, these
                        // start a named parameter when a name follows.
                        guard !(character == "$" && previousIsIdentifierCharacter),
                            let next = scalar(at: index), isIdentifierCharacter(next)
                        else { break }
                        var parameter = String(character)
                        while let next = scalar(at: index), isIdentifierCharacter(next) {
                            parameter.unicodeScalars.append(next)
                            index += 1
                        }
                        report({ _ in .bindParameter(parameter) }, at: elementIndex)
                        previousIsIdentifierCharacter = true
                        continue
                    default:
                        break
                    }
                    previousIsIdentifierCharacter = isIdentifierCharacter(character)

                case .string:
                    if character == "'" {
                        if scalar(at: index) == "'" {
                            index += 1
                        } else {
                            state = .normal
                            previousIsIdentifierCharacter = false
                        }
                    }

                case .quotedIdentifier(let open, let close, _):
                    if character == close {
                        if open == close, scalar(at: index) == close {
                            index += 1
                        } else {
                            state = .normal
                            previousIsIdentifierCharacter = false
                        }
                    }

                case .lineComment:
                    if character == "\n" || character == "\r" {
                        state = .normal
                        previousIsIdentifierCharacter = false
                    }

                case .blockComment:
                    if character == "*", scalar(at: index) == "/" {
                        index += 1
                        state = .normal
                        previousIsIdentifierCharacter = false
                    }
                }
            }
        }

        switch state {
        case .normal, .lineComment:
            break
        case .string(let start):
            report(SQLMacroDiagnostic.unterminatedString, at: start)
        case .quotedIdentifier(let open, let close, let start):
            report({ .unterminatedQuotedIdentifier(open: Character(open), close: Character(close), excerpt: $0) }, at: start)
        case .blockComment(let start):
            report(SQLMacroDiagnostic.unterminatedBlockComment, at: start)
        }
        for start in openParentheses {
            report(SQLMacroDiagnostic.unclosedParenthesis, at: start)
        }
        return diagnostics.sorted { $0.position < $1.position }
    }

    /// A character of an unquoted SQLite identifier or parameter name.
    static func isIdentifierCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", "$": true
        default: !scalar.isASCII
        }
    }

    /// The literal's characters as the compiled string has them, each with its position in the
    /// source, and its interpolations.
    static func elements(of literal: StringLiteralExprSyntax) -> [Element] {
        let delimiterLength = literal.openingPounds?.text.count ?? 0
        var elements: [Element] = []
        for segment in literal.segments {
            switch segment {
            case .expressionSegment(let expression):
                elements.append(.interpolation(expression))
            case .stringSegment(let string):
                appendUnescaped(string, delimiterLength: delimiterLength, to: &elements)
            }
        }
        return elements
    }

    private static func appendUnescaped(_ segment: StringSegmentSyntax, delimiterLength: Int, to elements: inout [Element]) {
        let token = segment.content
        let scalars = Array(token.text.unicodeScalars)
        // The UTF-8 offset of each scalar from the token's start.
        var offsets: [Int] = []
        offsets.reserveCapacity(scalars.count)
        var offset = 0
        for scalar in scalars {
            offsets.append(offset)
            offset += UTF8.width(scalar)
        }
        let start = token.positionAfterSkippingLeadingTrivia
        func position(_ index: Int) -> AbsolutePosition {
            start.advanced(by: offsets[index])
        }

        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            // An escape is a backslash followed by as many `#` as the literal's delimiter.
            var escapeEnd = index + 1
            if scalar == "\\" {
                var pounds = 0
                while pounds < delimiterLength, escapeEnd < scalars.count, scalars[escapeEnd] == "#" {
                    pounds += 1
                    escapeEnd += 1
                }
                if pounds < delimiterLength || escapeEnd >= scalars.count {
                    escapeEnd = -1
                }
            } else {
                escapeEnd = -1
            }
            guard escapeEnd >= 0 else {
                elements.append(.scalar(scalar, position(index), segment))
                index += 1
                continue
            }

            let escaped = scalars[escapeEnd]
            switch escaped {
            case "n": elements.append(.scalar("\n", position(index), segment))
            case "t": elements.append(.scalar("\t", position(index), segment))
            case "r": elements.append(.scalar("\r", position(index), segment))
            case "0": elements.append(.scalar("\0", position(index), segment))
            case "\\", "\"", "'": elements.append(.scalar(escaped, position(index), segment))
            case "u":
                // \u{1F600}
                var hex = ""
                var cursor = escapeEnd + 1
                if cursor < scalars.count, scalars[cursor] == "{" {
                    cursor += 1
                    while cursor < scalars.count, scalars[cursor] != "}" {
                        hex.unicodeScalars.append(scalars[cursor])
                        cursor += 1
                    }
                }
                if let value = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(value) {
                    elements.append(.scalar(decoded, position(index), segment))
                }
                index = min(cursor + 1, scalars.count)
                continue
            case " ", "\t", "\n", "\r":
                // A multi-line literal's line continuation: the backslash, trailing whitespace
                // and the line break are not part of the string.
                var cursor = escapeEnd
                while cursor < scalars.count, scalars[cursor] == " " || scalars[cursor] == "\t" {
                    cursor += 1
                }
                if cursor < scalars.count, scalars[cursor] == "\r" { cursor += 1 }
                if cursor < scalars.count, scalars[cursor] == "\n" { cursor += 1 }
                index = cursor
                continue
            default:
                // Not a valid escape: the compiler reports it.
                elements.append(.scalar(escaped, position(index), segment))
            }
            index = escapeEnd + 1
        }
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
