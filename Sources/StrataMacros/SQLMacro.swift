import SwiftSyntax
import SwiftSyntaxMacros

// Placeholder.
public struct SQLMacro: ExpressionMacro {
    public static func expansion(of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext) throws -> ExprSyntax { "fatalError()" }
}
