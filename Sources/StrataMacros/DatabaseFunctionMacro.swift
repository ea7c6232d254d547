import SwiftSyntax
import SwiftSyntaxMacros

// Placeholder.
public struct DatabaseFunctionMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol, in context: some MacroExpansionContext) throws -> [DeclSyntax] { [] }
}
