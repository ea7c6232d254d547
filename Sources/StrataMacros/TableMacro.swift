import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@Table`: makes a struct a `StrataQueries.Table` (and a `PrimaryKeyedTable` when it has a
/// primary key) with typed columns, by-index decoding and encoding, and a `Draft`.
///
/// Stored instance properties are columns, in declaration order; `@Column` renames one, gives
/// its stored representation, marks the primary key or a generated column; `@Ephemeral`
/// properties are not columns and keep their default value.
public struct TableMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            diagnoseNotAStruct(macro: "Table", node: node, declaration: declaration, in: context)
            return []
        }
        if let generics = structDecl.genericParameterClause {
            // A table's columns and names are static stored properties, which generic types
            // cannot have.
            context.diagnose(
                Diagnostic(
                    node: generics,
                    message: PropertyMessages.genericTable(name: structDecl.name.text)))
            return []
        }
        let typeName = type.trimmedDescription
        var analysis = PropertyAnalysis(of: structDecl, macro: "Table", typeName: typeName, in: context)

        // The table's name: `@Table("…")`, else the type's camel-cased plural.
        let defaultName = defaultTableName(forTypeNamed: structDecl.name.identifier?.name ?? structDecl.name.text)
        var tableNameExpression = stringLiteral(defaultName)
        var tableNameIsConstant = false
        if case .argumentList(let arguments) = node.arguments, let argument = arguments.first(where: { $0.label == nil }) {
            let expression = argument.expression
            if let literal = expression.as(StringLiteralExprSyntax.self), let value = literal.representedLiteralValue {
                if value.isEmpty {
                    analysis.hasErrors = true
                    context.diagnose(
                        Diagnostic(
                            node: expression,
                            message: PropertyMessages.emptyTableName(defaultName: defaultName),
                            fixIt: FixIt(
                                message: PropertyFixItMessage("useDefaultTableName", "Use '\(defaultName)'"),
                                changes: [
                                    .replace(oldNode: Syntax(expression), newNode: Syntax(StringLiteralExprSyntax(content: defaultName)))
                                ])))
                } else {
                    tableNameExpression = stringLiteral(value)
                }
            } else if !expression.is(NilLiteralExprSyntax.self) {
                // A constant: used as written.
                tableNameExpression = expression.trimmedDescription
                tableNameIsConstant = true
            }
        }

        let primaryKey = findPrimaryKey(in: &analysis, declaration: structDecl, typeName: typeName, in: context)
        if analysis.hasErrors { return [] }

        let source = TableSource(
            typeName: typeName,
            access: structDecl.modifiers.accessPrefix,
            tableName: tableNameIsConstant ? ": String = \(tableNameExpression)" : " = \(tableNameExpression)",
            columns: analysis.columns,
            primaryKey: primaryKey,
            addsSendable: protocols.containsSendable
        ).extensionSource
        return [try ExtensionDeclSyntax("\(raw: source)")]
    }

    /// The primary-key column: the one marked `@Column(primaryKey: true)`, else a stored `id`
    /// not marked `primaryKey: false`. Reports composite and generated keys, and a missing key
    /// on an `Identifiable` type.
    private static func findPrimaryKey(
        in analysis: inout PropertyAnalysis,
        declaration: StructDeclSyntax,
        typeName: String,
        in context: some MacroExpansionContext
    ) -> ColumnProperty? {
        let marked = analysis.columns.filter { $0.primaryKeyFlag == true }
        for extra in marked.dropFirst() {
            analysis.hasErrors = true
            context.diagnose(
                Diagnostic(
                    node: extra.primaryKeyNode,
                    message: PropertyMessages.compositePrimaryKey(first: marked[0].name, second: extra.name)))
        }
        let key = marked.first ?? analysis.columns.first { $0.name == "id" && $0.primaryKeyFlag != false }
        if let key, key.isGenerated {
            analysis.hasErrors = true
            context.diagnose(
                Diagnostic(
                    node: key.primaryKeyNode,
                    message: PropertyMessages.generatedPrimaryKey(property: key.name, isImplicit: key.primaryKeyFlag != true)))
            return nil
        }
        if key == nil, analysis.idStatus != .invalid, let identifiable = declaration.identifiableInheritance {
            let reason: PropertyMessages.MissingKeyReason =
                if analysis.idStatus == .ephemeral {
                    .ephemeralID
                } else if analysis.columns.contains(where: { $0.name == "id" && $0.primaryKeyFlag == false }) { .notAKeyID } else {
                    .noStoredID
                }
            analysis.hasErrors = true
            context.diagnose(
                Diagnostic(
                    node: identifiable,
                    message: PropertyMessages.missingPrimaryKey(type: declaration.name.text, reason: reason)))
        }
        return key
    }
}

/// The source text of the extension `@Table` generates.
struct TableSource {
    let typeName: String
    /// `public `, `package ` or empty.
    let access: String
    /// What follows `static let tableName`: ` = "players"`, or ` : String = Names.players` for a
    /// constant passed to `@Table`.
    let tableName: String
    /// Every column, in declaration order.
    let columns: [ColumnProperty]
    let primaryKey: ColumnProperty?
    /// Whether to declare `Sendable`: the compiler asks for it when the type does not conform
    /// yet (a public struct is not implicitly `Sendable`, and `Table` refines it).
    let addsSendable: Bool

    var writableColumns: [ColumnProperty] { columns.filter { !$0.isGenerated } }
    var generatedColumns: [ColumnProperty] { columns.filter(\.isGenerated) }
    /// What a SELECT reads: the written columns, then the generated ones.
    var selectedColumns: [ColumnProperty] { writableColumns + generatedColumns }

    var extensionSource: String {
        var conformances =
            primaryKey == nil
            ? "StrataQueries.Table"
            : "StrataQueries.Table, StrataQueries.PrimaryKeyedTable"
        if addsSendable { conformances += ", Swift.Sendable" }
        var members = [tableColumnsSource]
        if primaryKey != nil { members.append(draftSource) }
        members.append(staticMembersSource)
        members.append(decoderInitSource)
        members.append(encodeColumnsSource(propertyType: { $0.type }, representation: { $0.representation }))
        return """
            extension \(typeName): \(conformances) {
            \(members.map { indent($0) }.joined(separator: "\n"))
            }
            """
    }

    private var tableColumnsSource: String {
        var lines: [String] = []
        if let primaryKey {
            lines.append("\(access)struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {")
            lines.append("    \(access)typealias QueryValue = \(typeName)")
            lines.append("    \(access)typealias PrimaryKey = \(primaryKey.valueType)")
        } else {
            lines.append("\(access)struct TableColumns: StrataQueries.TableDefinition {")
            lines.append("    \(access)typealias QueryValue = \(typeName)")
        }
        for column in columns {
            lines.append("    \(access)let \(column.identifier) = \(columnType(column))(\(stringLiteral(column.columnName)))")
        }
        if let primaryKey {
            lines.append("    \(access)var primaryKey: \(columnType(primaryKey)) {")
            lines.append("        self.\(primaryKey.identifier)")
            lines.append("    }")
        }
        let all = selectedColumns.map { "TableColumns().\($0.identifier)" }.joined(separator: ", ")
        lines.append("    \(access)static let allColumns: [any StrataQueries.TableColumnExpression] = [\(all)]")
        // The column list is written into every query of the table: build its text once.
        lines.append(
            "    \(access)static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: \", \"))"
        )
        lines.append("    \(access)var queryFragment: StrataQueries.QueryFragment { Self.selectionFragment }")
        lines.append("    \(access)init() {}")
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    private func columnType(_ column: ColumnProperty) -> String {
        "StrataQueries.TableColumn<\(typeName), \(column.valueType)>"
    }

    /// The table's row with an optional primary key.
    private var draftSource: String {
        guard let primaryKey else { return "" }
        let columns = writableColumns
        func draftType(_ column: ColumnProperty) -> TypeSyntax {
            column.name == primaryKey.name && !column.type.isOptional ? column.type.optionalized : column.type
        }
        func draftRepresentation(_ column: ColumnProperty) -> TypeSyntax? {
            guard let representation = column.representation else { return nil }
            return column.name == primaryKey.name && !representation.isOptional ? representation.optionalized : representation
        }
        var lines: [String] = []
        lines.append("\(access)struct Draft: StrataQueries.TableDraft {")
        lines.append("    \(access)typealias PrimaryTable = \(typeName)")
        for column in columns {
            lines.append("    \(access)var \(column.identifier): \(draftType(column))")
        }
        let parameters = columns.map { column in
            let defaultValue = column.name == primaryKey.name ? "nil" : column.defaultValue?.trimmedDescription
            return "\(column.identifier): \(draftType(column))" + (defaultValue.map { " = \($0)" } ?? "")
        }
        lines.append("    \(access)init(\(parameters.joined(separator: ", "))) {")
        for column in columns {
            lines.append("        self.\(column.identifier) = \(column.identifier)")
        }
        lines.append("    }")
        lines.append("    \(access)init(_ record: \(typeName)) {")
        for column in columns {
            lines.append("        self.\(column.identifier) = record.\(column.identifier)")
        }
        lines.append("    }")
        lines.append(indent(encodeColumnsSource(propertyType: draftType, representation: draftRepresentation)))
        lines.append("}")
        return lines.joined(separator: "\n")
    }

    private var staticMembersSource: String {
        var lines: [String] = []
        lines.append("\(access)static let columns = TableColumns()")
        lines.append("\(access)static let tableName\(tableName)")
        lines.append("\(access)static let columnNames: [String] = \(nameList(writableColumns))")
        if !generatedColumns.isEmpty {
            lines.append("\(access)static let generatedColumnNames: [String] = \(nameList(generatedColumns))")
        }
        // `TableRecord` defaults the key to `["id"]`: a table without a key says it has none.
        lines.append("\(access)static let primaryKeyColumnNames: [String] = \(nameList(primaryKey.map { [$0] } ?? []))")
        lines.append("\(access)static let columnCount = \(columns.count)")
        return lines.joined(separator: "\n")
    }

    private func nameList(_ columns: [ColumnProperty]) -> String {
        "[" + columns.map { stringLiteral($0.columnName) }.joined(separator: ", ") + "]"
    }

    /// Each column through `decode`, the single-column fast path; generated columns last.
    private var decoderInitSource: String {
        StrataMacros.decoderInitSource(access: access, columns: selectedColumns, readMethod: "decode")
    }

    /// `encodeColumns(to:)` for the table or its draft: the written columns, in `columnNames`
    /// order, each through its representation.
    private func encodeColumnsSource(
        propertyType: (ColumnProperty) -> TypeSyntax,
        representation: (ColumnProperty) -> TypeSyntax?
    ) -> String {
        var lines: [String] = []
        lines.append("\(access)func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {")
        for column in writableColumns {
            if let representation = representation(column) {
                lines.append("    columns.append(\(representation.expression)(queryOutput: self.\(column.identifier)))")
            } else {
                lines.append("    columns.append(self.\(column.identifier))")
            }
        }
        lines.append("}")
        return lines.joined(separator: "\n")
    }
}

/// `text` with every line indented by four spaces.
func indent(_ text: String) -> String {
    text.split(separator: "\n", omittingEmptySubsequences: false)
        .map { $0.isEmpty ? "" : "    " + $0 }
        .joined(separator: "\n")
}

extension [TypeSyntax] {
    /// Whether the compiler asks the macro to add `Sendable`, among the conformances the macro
    /// declares that the type lacks.
    var containsSendable: Bool {
        contains { ["Sendable", "Swift.Sendable"].contains($0.trimmedDescription) }
    }
}

extension StructDeclSyntax {
    /// `Identifiable` (or `Swift.Identifiable`) in the inheritance clause.
    var identifiableInheritance: InheritedTypeSyntax? {
        inheritanceClause?.inheritedTypes.first {
            let name = $0.type.trimmedDescription
            return name == "Identifiable" || name == "Swift.Identifiable"
        }
    }
}

/// Reports `@Table` or `@Selection` on something other than a struct, with a fix-it turning a
/// class or an actor into a struct.
func diagnoseNotAStruct(
    macro: String,
    node: AttributeSyntax,
    declaration: some DeclGroupSyntax,
    in context: some MacroExpansionContext
) {
    var keyword: TokenSyntax?
    let kind: String
    let name: String?
    if let decl = declaration.as(ClassDeclSyntax.self) {
        (kind, name, keyword) = ("class", decl.name.text, decl.classKeyword)
    } else if let decl = declaration.as(ActorDeclSyntax.self) {
        (kind, name, keyword) = ("actor", decl.name.text, decl.actorKeyword)
    } else if let decl = declaration.as(EnumDeclSyntax.self) {
        (kind, name) = ("enum", decl.name.text)
    } else if let decl = declaration.as(ProtocolDeclSyntax.self) {
        (kind, name) = ("protocol", decl.name.text)
    } else if let decl = declaration.as(ExtensionDeclSyntax.self) {
        (kind, name) = ("extension", decl.extendedType.trimmedDescription)
    } else {
        (kind, name) = ("declaration", nil)
    }
    let fixIts =
        keyword.map { keyword in
            [
                FixIt(
                    message: PropertyFixItMessage("makeStruct", "Replace '\(keyword.text)' with 'struct'"),
                    changes: [
                        .replace(
                            oldNode: Syntax(keyword),
                            newNode: Syntax(
                                TokenSyntax.keyword(.struct, leadingTrivia: keyword.leadingTrivia, trailingTrivia: keyword.trailingTrivia)))
                    ])
            ]
        } ?? []
    context.diagnose(
        Diagnostic(
            node: node,
            message: PropertyMessages.notAStruct(macro: macro, kind: kind, name: name),
            fixIts: fixIts))
}
