import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `#sql("…")`: a raw SQL expression, checked at compile time.
///
/// `#sql("\($0.name) COLLATE NOCASE = \(name)")` expands to
/// `StrataQueries.SQLQueryExpression("\($0.name) COLLATE NOCASE = \(name)")`, and
/// `#sql("count(*)", as: Int.self)` to `StrataQueries.SQLQueryExpression("count(*)", as: Int.self)`:
/// the literal type-checks as a `QueryFragment`, whose interpolation splices expressions and
/// binds values.
///
/// The literal's text is checked by ``SQLLiteralValidator``: unterminated quotes and comments,
/// unbalanced parentheses and raw bind parameters are errors. The SQL is expanded even when it
/// has errors, so that the rest of the expression still type-checks.
public struct SQLMacro: ExpressionMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax,
        in context: some MacroExpansionContext
    ) throws -> ExprSyntax {
        let arguments = Array(node.arguments)
        guard let first = arguments.first else {
            // The macro's signature requires the argument; the compiler reports its absence.
            return "StrataQueries.SQLQueryExpression(\"\")"
        }
        // Diagnose on the argument as it is in the source (a trimmed copy has no positions).
        if let literal = first.expression.as(StringLiteralExprSyntax.self) {
            for diagnostic in SQLLiteralValidator.diagnostics(for: literal) {
                context.diagnose(diagnostic)
            }
        } else {
            context.diagnose(Diagnostic(node: first.expression, message: SQLMacroDiagnostic.notALiteral))
        }
        let fragment = first.expression.trimmed

        var expansionArguments: [String] = [fragment.description]
        for argument in arguments.dropFirst() {
            let label = argument.label.map { "\($0.text): " } ?? ""
            expansionArguments.append(label + argument.expression.trimmedDescription)
        }
        return "StrataQueries.SQLQueryExpression(\(raw: expansionArguments.joined(separator: ", ")))"
    }
}
