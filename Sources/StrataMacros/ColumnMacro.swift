import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Column`: a marker read by `@Table` and `@Selection`; it generates nothing. Its arguments
/// are checked by the macro of the enclosing type, which knows the whole property.
public struct ColumnMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        diagnoseIfNotAProperty(attribute: "Column", node: node, declaration: declaration, in: context)
        return []
    }
}

/// `@Ephemeral`: marks a property that is not a column; a marker read by `@Table` and
/// `@Selection` that generates nothing.
public struct EphemeralMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        diagnoseIfNotAProperty(attribute: "Ephemeral", node: node, declaration: declaration, in: context)
        return []
    }
}

/// The markers only mean something on a property (`var` or `let`).
private func diagnoseIfNotAProperty(
    attribute: String,
    node: AttributeSyntax,
    declaration: some DeclSyntaxProtocol,
    in context: some MacroExpansionContext
) {
    guard !declaration.is(VariableDeclSyntax.self) else { return }
    context.diagnose(Diagnostic(node: node, message: PropertyMessages.columnNotOnProperty(attribute: attribute)))
}
