import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// A stored property of a `@Table` or `@Selection` struct that maps to a column.
struct ColumnProperty {
    /// The property's name as written (backticks kept), for generated Swift code.
    var identifier: String
    /// The property's name without backticks.
    var name: String
    /// The column's name: `@Column("…")`, else the property's name.
    var columnName: String
    /// The property's Swift type (written or inferred from a literal), `Self` resolved.
    var type: TypeSyntax
    /// The stored form for `@Column(as:)`, made optional when the property is optional.
    var representation: TypeSyntax?
    /// The value the property starts with: its initializer, or `nil` for an optional `var`.
    var defaultValue: ExprSyntax?
    /// `@Column(generated: …)`.
    var isGenerated: Bool
    /// `@Column(primaryKey: …)`, when given.
    var primaryKeyFlag: Bool?
    /// Where to report primary-key problems: the `primaryKey:` argument, else the name.
    var primaryKeyNode: Syntax
    /// The property's name in its declaration.
    var node: Syntax

    /// The column's value type: its representation, else the property's type.
    var valueType: TypeSyntax { representation ?? type }
}

/// What the stored properties of a struct say about its columns.
struct PropertyAnalysis {
    /// The columns, in declaration order.
    var columns: [ColumnProperty] = []
    /// Whether an error was reported: no code should be generated.
    var hasErrors = false
    /// How a property named `id` that is not a column was declared, to explain a missing key.
    var idStatus: IDStatus = .absent

    enum IDStatus {
        /// No stored `id`, or one that is a column.
        case absent
        /// `@Ephemeral var id`.
        case ephemeral
        /// `id` was reported as invalid: a missing key would only repeat the problem.
        case invalid
    }

    /// Reads the members of `declaration`, reporting problems through `context`.
    ///
    /// - Parameters:
    ///   - macro: `Table` or `Selection`, for messages.
    ///   - typeName: The type's name as seen from its extension, replacing `Self` in types.
    init(
        of declaration: StructDeclSyntax,
        macro: String,
        typeName: String,
        in context: some MacroExpansionContext
    ) {
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            analyze(variable, macro: macro, typeName: typeName, in: context)
        }
        if macro == "Table" {
            checkDuplicateColumnNames(in: context)
        }
    }

    // MARK: - One declaration

    private mutating func analyze(
        _ variable: VariableDeclSyntax,
        macro: String,
        typeName: String,
        in context: some MacroExpansionContext
    ) {
        let columnAttribute = variable.attributes.attribute(named: "Column")
        let ephemeralAttribute = variable.attributes.attribute(named: "Ephemeral")
        let isStatic = variable.modifiers.contains { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }
        let isLazy = variable.modifiers.contains { $0.name.tokenKind == .keyword(.lazy) }
        let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
        let bindings = Array(variable.bindings)

        for (index, binding) in bindings.enumerated() {
            let propertyName = binding.pattern.trimmedDescription
            // Static, computed and lazy properties are never columns.
            let nonStoredKind: String? =
                if isStatic { "static property" } else if binding.isComputed { "computed property" } else if isLazy { "lazy property" } else
                { nil }
            if let nonStoredKind {
                if let columnAttribute {
                    hasErrors = true
                    context.diagnose(
                        Diagnostic(
                            node: columnAttribute,
                            message: PropertyMessages.columnOnNonStoredProperty(
                                attribute: "Column", property: propertyName, kind: nonStoredKind),
                            fixIt: FixIt(
                                message: PropertyFixItMessage("removeColumn", "Remove '@Column'"),
                                changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(variable.removingAttribute(columnAttribute)))]
                            )))
                }
                if let ephemeralAttribute {
                    context.diagnose(
                        Diagnostic(
                            node: ephemeralAttribute,
                            message: PropertyMessages.ephemeralOnNonStoredProperty(property: propertyName, kind: nonStoredKind),
                            fixIt: FixIt(
                                message: PropertyFixItMessage("removeEphemeral", "Remove '@Ephemeral'"),
                                changes: [
                                    .replace(oldNode: Syntax(variable), newNode: Syntax(variable.removingAttribute(ephemeralAttribute)))
                                ])))
                }
                continue
            }

            let identifierPattern = binding.pattern.as(IdentifierPatternSyntax.self)
            let isID = identifierPattern?.identifier.identifier?.name == "id"

            if let columnAttribute, let ephemeralAttribute {
                hasErrors = true
                if isID { idStatus = .invalid }
                context.diagnose(
                    Diagnostic(
                        node: ephemeralAttribute,
                        message: PropertyMessages.columnAndEphemeral(property: propertyName),
                        fixIts: [
                            FixIt(
                                message: PropertyFixItMessage("removeEphemeral", "Remove '@Ephemeral'"),
                                changes: [
                                    .replace(oldNode: Syntax(variable), newNode: Syntax(variable.removingAttribute(ephemeralAttribute)))
                                ]),
                            FixIt(
                                message: PropertyFixItMessage("removeColumn", "Remove '@Column'"),
                                changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(variable.removingAttribute(columnAttribute)))]
                            ),
                        ]))
                continue
            }

            let declaredType = binding.typeAnnotation?.type ?? laterType(in: bindings, after: index, binding: binding)

            if ephemeralAttribute != nil {
                // Not a column: it keeps its default value in every decoded row. An optional
                // `var` without an initializer starts as nil.
                let hasDefault = binding.initializer != nil || (!isLet && declaredType.map(\.isOptional) == true)
                if !hasDefault {
                    hasErrors = true
                    context.diagnose(
                        Diagnostic(
                            node: binding.pattern,
                            message: PropertyMessages.ephemeralWithoutDefault(property: propertyName)))
                }
                if isID { idStatus = hasDefault ? .ephemeral : .invalid }
                continue
            }

            func fail(_ message: PropertyDiagnostic, at node: some SyntaxProtocol, fixIts: [FixIt] = []) {
                hasErrors = true
                if isID { idStatus = .invalid }
                context.diagnose(Diagnostic(node: node, message: message, fixIts: fixIts))
            }

            guard let identifierPattern else {
                fail(PropertyMessages.unsupportedPattern(pattern: propertyName), at: binding.pattern)
                continue
            }

            if isLet, let initializer = binding.initializer {
                fail(
                    PropertyMessages.letWithInitializer(property: propertyName), at: initializer,
                    fixIts: [
                        FixIt(
                            message: PropertyFixItMessage("makeVar", "Replace 'let' with 'var'"),
                            changes: [
                                .replace(
                                    oldNode: Syntax(variable.bindingSpecifier),
                                    newNode: Syntax(
                                        TokenSyntax.keyword(
                                            .var, leadingTrivia: variable.bindingSpecifier.leadingTrivia,
                                            trailingTrivia: variable.bindingSpecifier.trailingTrivia)))
                            ]),
                        FixIt(
                            message: PropertyFixItMessage("addEphemeral", "Mark '\(propertyName)' '@Ephemeral'"),
                            changes: [.replace(oldNode: Syntax(variable), newNode: Syntax(variable.prependingAttribute("@Ephemeral")))]),
                    ])
                continue
            }

            // `@Column(…)` options.
            var options = ColumnOptions()
            if let columnAttribute {
                guard let parsed = ColumnOptions(columnAttribute, property: propertyName, in: context) else {
                    hasErrors = true
                    if isID { idStatus = .invalid }
                    continue
                }
                options = parsed
                if bindings.count > 1, options.name != nil || options.primaryKey != nil {
                    fail(PropertyMessages.multipleBindingsWithOptions(attribute: "Column"), at: columnAttribute)
                    continue
                }
            }

            // The type: written, or inferred from a literal.
            let inferredType = binding.initializer.flatMap { literalType(of: $0.value) }
            guard let writtenType = declaredType ?? inferredType else {
                fail(
                    PropertyMessages.missingTypeAnnotation(
                        property: propertyName, initializer: binding.initializer?.value.trimmedDescription),
                    at: binding.pattern)
                continue
            }
            var type = writtenType.trimmed.resolvingSelf(as: typeName)
            // `T!` is `T?` wherever generated code names the type (generic arguments, `.self`).
            if let unwrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
                type = unwrapped.wrappedType.optionalized
            }

            if let problem = TypeProblem(of: type, hasRepresentation: options.representation != nil) {
                let typeText = type.trimmedDescription
                let message: PropertyDiagnostic
                var fixIts: [FixIt] = []
                switch problem {
                case .tuple:
                    message = PropertyMessages.tupleType(property: propertyName, type: typeText)
                case .function:
                    message = PropertyMessages.functionType(property: propertyName, type: typeText)
                case .existential:
                    message = PropertyMessages.existentialType(property: propertyName, type: typeText)
                case .collection(let collection):
                    message = PropertyMessages.collectionType(property: propertyName, type: typeText, element: collection)
                    if columnAttribute == nil {
                        fixIts.append(
                            FixIt(
                                message: PropertyFixItMessage("storeAsJSON", "Store '\(propertyName)' as JSON"),
                                changes: [
                                    .replace(
                                        oldNode: Syntax(variable),
                                        newNode: Syntax(variable.prependingAttribute("@Column(as: JSONRepresentation<\(collection)>.self)"))
                                    )
                                ]))
                    }
                }
                fail(message, at: binding.typeAnnotation?.type ?? TypeSyntax(type), fixIts: fixIts)
                continue
            }

            var representation = options.representation?.trimmed.resolvingSelf(as: typeName)
            if let written = representation, type.isOptional, !written.isOptional {
                representation = written.optionalized
            }

            let name = identifierPattern.identifier.identifier?.name ?? identifierPattern.identifier.text
            let defaultValue: ExprSyntax? =
                if let initializer = binding.initializer { initializer.value.trimmed } else if !isLet, type.isOptional { "nil" } else {
                    nil
                }
            columns.append(
                ColumnProperty(
                    identifier: identifierPattern.identifier.trimmedDescription,
                    name: name,
                    columnName: options.name ?? name,
                    type: type,
                    representation: representation,
                    defaultValue: defaultValue,
                    isGenerated: options.isGenerated,
                    primaryKeyFlag: options.primaryKey,
                    primaryKeyNode: options.primaryKeyNode ?? Syntax(identifierPattern),
                    node: Syntax(identifierPattern)))
        }
    }

    /// In `var a, b: Int`, `a` has the type written after `b`.
    private func laterType(in bindings: [PatternBindingSyntax], after index: Int, binding: PatternBindingSyntax) -> TypeSyntax? {
        guard binding.initializer == nil else { return nil }
        for later in bindings[(index + 1)...] {
            if let type = later.typeAnnotation?.type { return type }
            if later.initializer != nil { return nil }
        }
        return nil
    }

    private mutating func checkDuplicateColumnNames(in context: some MacroExpansionContext) {
        var seen: [String: ColumnProperty] = [:]
        for column in columns {
            if let first = seen[column.columnName] {
                hasErrors = true
                context.diagnose(
                    Diagnostic(
                        node: column.node,
                        message: PropertyMessages.duplicateColumnName(column: column.columnName, first: first.name, second: column.name)))
            } else {
                seen[column.columnName] = column
            }
        }
    }
}

// MARK: - @Column options

/// The arguments of one `@Column` attribute.
struct ColumnOptions {
    var name: String?
    var representation: TypeSyntax?
    var primaryKey: Bool?
    var primaryKeyNode: Syntax?
    var isGenerated = false

    init() {}

    /// Reads `@Column(_:as:primaryKey:)` / `@Column(_:as:generated:)`; nil after reporting a
    /// malformed argument.
    init?(_ attribute: AttributeSyntax, property: String, in context: some MacroExpansionContext) {
        guard case .argumentList(let arguments) = attribute.arguments else { return }
        var isValid = true
        for argument in arguments {
            let expression = argument.expression
            switch argument.label?.text {
            case nil:
                if expression.is(NilLiteralExprSyntax.self) { continue }
                guard let literal = expression.as(StringLiteralExprSyntax.self), let value = literal.representedLiteralValue else {
                    context.diagnose(Diagnostic(node: expression, message: PropertyMessages.columnNameNotALiteral(property: property)))
                    isValid = false
                    continue
                }
                if value.isEmpty {
                    context.diagnose(
                        Diagnostic(
                            node: expression,
                            message: PropertyMessages.emptyColumnName(property: property),
                            fixIt: FixIt(
                                message: PropertyFixItMessage("usePropertyName", "Use the property name '\(property)'"),
                                changes: [
                                    .replace(
                                        oldNode: Syntax(expression),
                                        newNode: Syntax(
                                            StringLiteralExprSyntax(content: property).with(\.leadingTrivia, expression.leadingTrivia).with(
                                                \.trailingTrivia, expression.trailingTrivia)))
                                ])))
                    isValid = false
                    continue
                }
                name = value
            case "as":
                if expression.is(NilLiteralExprSyntax.self) { continue }
                guard let member = expression.as(MemberAccessExprSyntax.self), member.declName.baseName.text == "self",
                    let base = member.base
                else {
                    context.diagnose(Diagnostic(node: expression, message: PropertyMessages.representationNotAType(property: property)))
                    isValid = false
                    continue
                }
                representation = TypeSyntax("\(raw: base.trimmedDescription)")
            case "primaryKey":
                if expression.is(NilLiteralExprSyntax.self) { continue }
                guard let literal = expression.as(BooleanLiteralExprSyntax.self) else {
                    context.diagnose(Diagnostic(node: expression, message: PropertyMessages.primaryKeyNotALiteral(property: property)))
                    isValid = false
                    continue
                }
                primaryKey = literal.literal.tokenKind == .keyword(.true)
                primaryKeyNode = Syntax(argument)
            case "generated":
                isGenerated = true
            default:
                continue
            }
        }
        if !isValid { return nil }
    }
}

// MARK: - Types

/// Why a property's type cannot be a column.
enum TypeProblem {
    case tuple
    case function
    case existential
    /// An array, dictionary or set; the associated value is the type to store as JSON.
    case collection(String)

    /// The problem with `type` as a column, if any. With `@Column(as:)` the representation
    /// decides what is stored, so only opaque types (which no decoded value can have) fail.
    init?(of type: TypeSyntax, hasRepresentation: Bool) {
        let base = type.strippingOptionals
        if hasRepresentation {
            guard base.is(SomeOrAnyTypeSyntax.self), base.as(SomeOrAnyTypeSyntax.self)?.someOrAnySpecifier.tokenKind == .keyword(.some)
            else { return nil }
            self = .existential
            return
        }
        if base.is(FunctionTypeSyntax.self) {
            self = .function
        } else if base.is(TupleTypeSyntax.self) {
            self = .tuple
        } else if base.is(SomeOrAnyTypeSyntax.self) || base.is(CompositionTypeSyntax.self) {
            self = .existential
        } else if let identifier = base.as(IdentifierTypeSyntax.self), ["Any", "AnyObject"].contains(identifier.name.text) {
            self = .existential
        } else if base.is(ArrayTypeSyntax.self) || base.is(DictionaryTypeSyntax.self) || base.isNamedCollection {
            self = .collection(base.trimmedDescription)
        } else {
            return nil
        }
    }
}

/// The type of a literal initial value: `0` → `Int`, `1.5` → `Double`, `""` → `String`,
/// `true` → `Bool`.
func literalType(of expression: ExprSyntax) -> TypeSyntax? {
    if expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
    if expression.is(FloatLiteralExprSyntax.self) { return "Double" }
    if expression.is(StringLiteralExprSyntax.self) { return "String" }
    if expression.is(BooleanLiteralExprSyntax.self) { return "Bool" }
    if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
        if prefix.expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if prefix.expression.is(FloatLiteralExprSyntax.self) { return "Double" }
    }
    return nil
}

extension TypeSyntax {
    /// `T?`, `T!` or `Optional<T>`.
    var isOptional: Bool {
        if self.is(OptionalTypeSyntax.self) || self.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let identifier = self.as(IdentifierTypeSyntax.self) {
            return identifier.name.text == "Optional" && identifier.genericArgumentClause != nil
        }
        if let member = self.as(MemberTypeSyntax.self) {
            return member.baseType.trimmedDescription == "Swift" && member.name.text == "Optional" && member.genericArgumentClause != nil
        }
        return false
    }

    /// The type without optionals, parentheses and attributes: `(@Sendable () -> Void)?` →
    /// `() -> Void`.
    var strippingOptionals: TypeSyntax {
        var type = self
        while true {
            if let optional = type.as(OptionalTypeSyntax.self) {
                type = optional.wrappedType
            } else if let optional = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
                type = optional.wrappedType
            } else if type.isOptional, let argument = type.genericArguments?.first, case .type(let wrapped) = argument.argument {
                type = wrapped
            } else if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let element = tuple.elements.first,
                element.firstName == nil
            {
                type = element.type
            } else if let attributed = type.as(AttributedTypeSyntax.self) {
                type = attributed.baseType
            } else {
                return type
            }
        }
    }

    private var genericArguments: GenericArgumentListSyntax? {
        self.as(IdentifierTypeSyntax.self)?.genericArgumentClause?.arguments
            ?? self.as(MemberTypeSyntax.self)?.genericArgumentClause?.arguments
    }

    /// `Array<T>`, `Set<T>`, `Dictionary<K, V>`, `ContiguousArray<T>`, possibly `Swift.`-qualified.
    var isNamedCollection: Bool {
        let collections: Set<String> = ["Array", "ContiguousArray", "Set", "Dictionary"]
        if let identifier = self.as(IdentifierTypeSyntax.self) {
            return collections.contains(identifier.name.text) && identifier.genericArgumentClause != nil
        }
        if let member = self.as(MemberTypeSyntax.self) {
            return member.baseType.trimmedDescription == "Swift" && collections.contains(member.name.text)
                && member.genericArgumentClause != nil
        }
        return false
    }

    /// `T?`, parenthesizing `T` where the postfix `?` would bind to only part of it.
    var optionalized: TypeSyntax {
        isSimpleTypeExpression ? "\(self)?" : "(\(self))?"
    }

    /// Whether `T.self`, `T.member` and `T(…)` parse as written.
    var isSimpleTypeExpression: Bool {
        if self.is(IdentifierTypeSyntax.self) || self.is(MemberTypeSyntax.self) || self.is(ArrayTypeSyntax.self)
            || self.is(DictionaryTypeSyntax.self) || self.is(TupleTypeSyntax.self)
        {
            return true
        }
        if let optional = self.as(OptionalTypeSyntax.self) {
            return optional.wrappedType.isSimpleTypeExpression
        }
        return false
    }

    /// The type as an expression, for `\(expression).self`, `.columnCount` and initializer calls:
    /// `T!` as `Optional<T>`, anything that would not parse in parentheses.
    var expression: String {
        if let optional = self.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return "Optional<\(optional.wrappedType.trimmedDescription)>"
        }
        return isSimpleTypeExpression ? trimmedDescription : "(\(trimmedDescription))"
    }

    /// The type with `Self` replaced by the type's name, since generated code uses it inside
    /// nested types, where `Self` means something else.
    func resolvingSelf(as typeName: String) -> TypeSyntax {
        SelfTypeRewriter(typeName: typeName).rewrite(self).cast(TypeSyntax.self)
    }
}

private final class SelfTypeRewriter: SyntaxRewriter {
    let typeName: String

    init(typeName: String) {
        self.typeName = typeName
        super.init()
    }

    override func visit(_ node: IdentifierTypeSyntax) -> TypeSyntax {
        guard node.name.tokenKind == .keyword(.Self) || node.name.text == "Self" else { return super.visit(node) }
        return TypeSyntax("\(raw: typeName)").with(\.leadingTrivia, node.leadingTrivia).with(\.trailingTrivia, node.trailingTrivia)
    }
}

// MARK: - Syntax helpers

extension PatternBindingSyntax {
    /// A getter, or `get`/`set` accessors (observers alone leave a property stored).
    var isComputed: Bool {
        switch accessorBlock?.accessors {
        case nil: return false
        case .getter: return true
        case .accessors(let accessors):
            return accessors.contains {
                ![.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind)
            }
        }
    }
}

extension AttributeListSyntax {
    /// The attribute `@name` or `@StrataQueries.name`.
    func attribute(named name: String) -> AttributeSyntax? {
        for element in self {
            guard case .attribute(let attribute) = element else { continue }
            let written = attribute.attributeName.trimmedDescription
            if written == name || written == "StrataQueries.\(name)" { return attribute }
        }
        return nil
    }
}

extension VariableDeclSyntax {
    /// The declaration without `attribute`, keeping its leading trivia.
    func removingAttribute(_ attribute: AttributeSyntax) -> VariableDeclSyntax {
        let remaining = attributes.filter { element in
            if case .attribute(let other) = element { return other.id != attribute.id }
            return true
        }
        var result = self
        result.attributes = remaining
        return result.with(\.leadingTrivia, leadingTrivia)
    }

    /// The declaration with `attribute` (source text) first.
    func prependingAttribute(_ attribute: String) -> VariableDeclSyntax {
        var result = with(\.leadingTrivia, [])
        let node = AttributeSyntax("\(raw: attribute)").with(\.trailingTrivia, .space)
        result.attributes.insert(.attribute(node), at: result.attributes.startIndex)
        return result.with(\.leadingTrivia, leadingTrivia)
    }
}

extension DeclModifierListSyntax {
    /// `public ` or `package ` (with the space) when the declaration has that access level,
    /// for generated members; otherwise empty (internal, or capped by a private type).
    var accessPrefix: String {
        for modifier in self {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): return "public "
            case .keyword(.package): return "package "
            default: continue
            }
        }
        return ""
    }
}

/// `"text"`, escaped as a Swift string literal.
func stringLiteral(_ text: String) -> String {
    StringLiteralExprSyntax(content: text).description
}
