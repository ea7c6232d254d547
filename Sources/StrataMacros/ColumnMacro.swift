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
    var fixIts: [FixIt] = []
    if var edited = declaration.asProtocol(WithAttributesSyntax.self) {
        edited.attributes = edited.attributes.filter { element in
            if case .attribute(let other) = element { return other.trimmedDescription != node.trimmedDescription }
            return true
        }
        let result = edited.with(\.leadingTrivia, declaration.leadingTrivia)
        fixIts.append(
            FixIt(
                message: PropertyFixItMessage("remove\(attribute)", "Remove '@\(attribute)'"),
                changes: [.replace(oldNode: Syntax(declaration), newNode: Syntax(result))]))
    }
    context.diagnose(Diagnostic(node: node, message: PropertyMessages.columnNotOnProperty(attribute: attribute), fixIts: fixIts))
}
