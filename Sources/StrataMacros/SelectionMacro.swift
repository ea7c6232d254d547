import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Selection`: makes a struct a custom result row. `Columns(…)` takes one expression per
/// stored property, in declaration order, and the struct decodes from them by index.
///
/// Properties follow the `@Table` rules: `@Column(as:)` gives a stored representation,
/// `@Ephemeral` properties keep their default value, static and computed ones are ignored.
public struct SelectionMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            diagnoseNotAStruct(macro: "Selection", node: node, declaration: declaration, in: context)
            return []
        }
        let typeName = type.trimmedDescription
        let analysis = PropertyAnalysis(of: structDecl, macro: "Selection", typeName: typeName, in: context)
        if analysis.hasErrors { return [] }
        // With `@Table` too (a CTE's rows: selected into, then read like a table), the table
        // already decodes the struct; `@Selection` adds only `Columns`.
        let isTable = structDecl.attributes.contains { element in
            guard case .attribute(let attribute) = element else { return false }
            let name = attribute.attributeName.trimmedDescription
            return name == "Table" || name == "StrataQueries.Table"
        }
        let source = SelectionSource(
            typeName: typeName,
            access: structDecl.modifiers.accessPrefix,
            columns: analysis.columns,
            addsSendable: protocols.containsSendable,
            columnsOnly: isTable
        ).extensionSource
        return [try ExtensionDeclSyntax("\(raw: source)")]
    }
}

/// The source text of the extension `@Selection` generates.
struct SelectionSource {
    let typeName: String
    /// `public `, `package ` or empty.
    let access: String
    /// Every column, in declaration order.
    let columns: [ColumnProperty]
    /// Whether to declare `Sendable`, which the compiler asks for when the type lacks it.
    let addsSendable: Bool
    /// Only the `Columns` type, for a struct that `@Table` already makes decodable.
    var columnsOnly = false

    var extensionSource: String {
        if columnsOnly {
            return """
                extension \(typeName): StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord {
                \(indent(columnsSource))
                }
                """
        }
        let members = [columnsSource, columnCountSource, decoderInitSource]
        let sendable = addsSendable ? ", Swift.Sendable" : ""
        return """
            extension \(typeName): StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord\(sendable) {
            \(members.map { indent($0) }.joined(separator: "\n"))
            }
            """
    }

    /// `Columns`: the selection as one expression, built from an expression per property.
    private var columnsSource: String {
        var lines: [String] = []
        lines.append("\(access)struct Columns: StrataQueries.QueryExpression {")
        lines.append("    \(access)typealias QueryValue = \(typeName)")
        lines.append("    \(access)let queryFragment: StrataQueries.QueryFragment")
        let parameters = columns.map { "\($0.identifier): some StrataQueries.QueryExpression<\($0.valueType)>" }
        lines.append("    \(access)init(\(parameters.joined(separator: ", "))) {")
        if columns.isEmpty {
            lines.append("        self.queryFragment = StrataQueries.QueryFragment()")
        } else {
            let fragments = columns.map { "\($0.identifier).queryFragment" }.joined(separator: ", ")
            lines.append("        self.queryFragment = [\(fragments)].joined(separator: \", \")")
        }
        lines.append("    }")
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    /// The columns read: the sum of every property's (a table reads several).
    private var columnCountSource: String {
        let sum = columns.isEmpty ? "0" : columns.map { "\($0.valueType.expression).columnCount" }.joined(separator: " + ")
        return """
            \(access)static var columnCount: Int {
                \(sum)
            }
            """
    }

    /// Each property through `read`, which decodes a whole table as well as a single column.
    private var decoderInitSource: String {
        StrataMacros.decoderInitSource(access: access, columns: columns, readMethod: "read")
    }
}
