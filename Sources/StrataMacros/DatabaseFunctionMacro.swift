import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@DatabaseFunction`: makes a global or static Swift function callable from SQL.
///
/// ```swift
/// @DatabaseFunction(isDeterministic: true)
/// func isWinner(score: Int, of target: Int) -> Bool { score >= target }
/// ```
///
/// adds two peers:
///
/// ```swift
/// struct __DatabaseFunction_isWinner: StrataQueries.ScalarDatabaseFunction {
///     let name = "isWinner"
///     let body: @Sendable (Int, Int) -> Bool
///     func callAsFunction(score: some StrataQueries.QueryExpression<Int>, of target: some StrataQueries.QueryExpression<Int>) -> StrataQueries.SQLQueryExpression<Bool> {
///         self.call([score.queryFragment, target.queryFragment])
///     }
///     var databaseFunction: StrataSQLite.DatabaseFunction {
///         StrataSQLite.DatabaseFunction("isWinner", deterministic: true, body)
///     }
/// }
/// var $isWinner: __DatabaseFunction_isWinner {
///     __DatabaseFunction_isWinner { (score: Int, target: Int) in
///         isWinner(score: score, of: target)
///     }
/// }
/// ```
///
/// The closure that calls the Swift function is written in `$isWinner`, at the function's own
/// scope, rather than inside the generated struct: there `Self` would be the struct, and the
/// struct's own members (`name`, `call`, `callAsFunction`, `databaseFunction`) would shadow a
/// global function of the same name. At the function's scope an unqualified call resolves
/// exactly as the user's own code does, and a static function is called as `Self.name(...)`.
///
/// A function must return a value (a SQL function always has a result; return an optional and
/// `nil` for NULL), must not be `async` or generic, and takes neither `inout` nor variadic
/// parameters. Default argument values are not carried over to `callAsFunction`: a SQL
/// function has a fixed number of arguments.
///
/// With `as: ((A, B) -> R).self`, `callAsFunction` takes `some QueryExpression<A>`, and the
/// closure receives `A` and passes `a.queryOutput` to the Swift function (the value itself when
/// the representation is spelled exactly like the parameter's type), and returns
/// `R(queryOutput: result)` (the result itself when spelled like the return type).
public struct DatabaseFunctionMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let function = declaration.as(FunctionDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: DatabaseFunctionDiagnostic.notAFunction))
            return []
        }
        var isValid = true
        func diagnose(_ node: some SyntaxProtocol, _ message: DatabaseFunctionDiagnostic, fixIts: [FixIt] = []) {
            context.diagnose(Diagnostic(node: Syntax(node), message: message, fixIts: fixIts))
            isValid = false
        }

        let swiftName = function.name.text
        let displayName = swiftName.strippingBackticks

        // Arguments of the attribute.
        var sqlName: ExprSyntax = ExprSyntax(StringLiteralExprSyntax(content: displayName))
        var representationExpression: ExprSyntax?
        var deterministic: ExprSyntax = "false"
        if case .argumentList(let arguments) = node.arguments {
            for argument in arguments {
                let expression = argument.expression
                switch argument.label?.text {
                case nil:
                    if expression.is(NilLiteralExprSyntax.self) { continue }
                    guard let literal = expression.as(StringLiteralExprSyntax.self),
                        literal.segments.allSatisfy({ $0.is(StringSegmentSyntax.self) })
                    else {
                        diagnose(expression, .nameNotLiteral)
                        continue
                    }
                    if literal.segments.allSatisfy({ $0.as(StringSegmentSyntax.self)?.content.text.isEmpty ?? true }) {
                        diagnose(expression, .emptyName)
                        continue
                    }
                    sqlName = ExprSyntax(literal.trimmed)
                case "as":
                    if expression.is(NilLiteralExprSyntax.self) { continue }
                    representationExpression = expression
                case "isDeterministic":
                    deterministic = expression.trimmed
                default:
                    continue
                }
            }
        }

        // Where the function lives: file scope (or a local scope), or a type.
        let modifiers = function.modifiers
        let isStatic = modifiers.contains {
            $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class)
        }
        if let enclosing = context.lexicalContext.first {
            if enclosing.is(ProtocolDeclSyntax.self) {
                diagnose(node, .protocolRequirement)
            } else if !isStatic, enclosing.isTypeScope {
                // `static` goes after the other modifiers, or takes the place of `func` in the
                // line (its indentation) when there are none.
                let fixed: FunctionDeclSyntax
                if modifiers.isEmpty {
                    let staticModifier = DeclModifierSyntax(
                        name: .keyword(.static, leadingTrivia: function.funcKeyword.leadingTrivia, trailingTrivia: .space)
                    )
                    fixed =
                        function
                        .with(\.modifiers, [staticModifier])
                        .with(\.funcKeyword, function.funcKeyword.with(\.leadingTrivia, []))
                } else {
                    let staticModifier = DeclModifierSyntax(name: .keyword(.static, trailingTrivia: .space))
                    fixed = function.with(\.modifiers, modifiers + [staticModifier])
                }
                let fixIt = FixIt(
                    message: DatabaseFunctionFixIt.addStatic,
                    changes: [.replace(oldNode: Syntax(function), newNode: Syntax(fixed))]
                )
                diagnose(function.name, .instanceMethod(name: displayName), fixIts: [fixIt])
            }
        }

        // Isolation: SQLite calls the function on whatever thread runs the statement.
        for attribute in function.attributes {
            if let attribute = attribute.as(AttributeSyntax.self),
                attribute.attributeName.trimmedDescription == "MainActor"
            {
                diagnose(attribute, .mainActor(name: displayName))
            }
        }

        // The signature.
        let signature = function.signature
        if let effects = signature.effectSpecifiers, let asyncSpecifier = effects.asyncSpecifier {
            let fixIt = FixIt(
                message: DatabaseFunctionFixIt.removeAsync,
                changes: [.replace(oldNode: Syntax(effects), newNode: Syntax(effects.with(\.asyncSpecifier, nil)))]
            )
            diagnose(asyncSpecifier, .async(name: displayName), fixIts: [fixIt])
        }
        if let generics = function.genericParameterClause {
            diagnose(generics, .generic(name: displayName))
        } else if let whereClause = function.genericWhereClause {
            diagnose(whereClause, .generic(name: displayName))
        }
        let isThrowing = signature.effectSpecifiers?.throwsClause != nil

        var parameters: [DatabaseFunctionParameter] = []
        let parameterNames = Set(signature.parameterClause.parameters.map { ($0.secondName ?? $0.firstName).text })
        for (index, parameter) in signature.parameterClause.parameters.enumerated() {
            let parameterName = (parameter.secondName ?? parameter.firstName).text
            if let ellipsis = parameter.ellipsis {
                diagnose(ellipsis, .variadicParameter(name: parameterName))
            }
            var type = parameter.type
            if let attributed = type.as(AttributedTypeSyntax.self) {
                let isInout = attributed.specifiers.contains {
                    $0.as(SimpleTypeSpecifierSyntax.self)?.specifier.tokenKind == .keyword(.inout)
                }
                if isInout {
                    let remaining = attributed.specifiers.filter {
                        $0.as(SimpleTypeSpecifierSyntax.self)?.specifier.tokenKind != .keyword(.inout)
                    }
                    let fixIt = FixIt(
                        message: DatabaseFunctionFixIt.removeInout,
                        changes: [.replace(oldNode: Syntax(attributed), newNode: Syntax(attributed.with(\.specifiers, remaining)))]
                    )
                    diagnose(attributed, .inoutParameter(name: parameterName), fixIts: [fixIt])
                }
                // Ownership specifiers (`borrowing`, `consuming`) and attributes don't apply to
                // the generated code, which takes its own copies.
                type = attributed.baseType
            }
            if let opaque = type.as(SomeOrAnyTypeSyntax.self), opaque.someOrAnySpecifier.tokenKind == .keyword(.some) {
                diagnose(opaque, .opaqueParameter(name: parameterName))
            }
            let label: String? = parameter.firstName.tokenKind == .wildcard ? nil : parameter.firstName.text
            var name = parameterName
            if (parameter.secondName ?? parameter.firstName).tokenKind == .wildcard
                || name.strippingBackticks == displayName
            {
                // An unnamed parameter, or one that would shadow the function inside the closure.
                name = "argument\(index + 1)"
                while parameterNames.contains(name) || name == displayName {
                    name += "_"
                }
            }
            parameters.append(DatabaseFunctionParameter(label: label, name: name, type: type.trimmed))
        }

        let returnType = signature.returnClause?.type.trimmed
        if returnType?.isVoid ?? true {
            diagnose(signature.returnClause.map { Syntax($0) } ?? Syntax(signature), .noReturnValue(name: displayName))
        }

        // `as:` representations.
        var argumentRepresentations: [TypeSyntax]?
        var resultRepresentation: TypeSyntax?
        if let representationExpression {
            if let functionType = representationFunctionType(representationExpression) {
                let types = functionType.parameters.map { $0.type.trimmed }
                if types.count != parameters.count {
                    diagnose(
                        representationExpression,
                        .representationArity(representations: types.count, parameters: parameters.count, name: displayName)
                    )
                } else {
                    argumentRepresentations = types
                    resultRepresentation = functionType.returnClause.type.trimmed
                }
            } else {
                diagnose(representationExpression, .representationNotFunctionType)
            }
        }

        guard isValid, let returnType else { return [] }

        // The generated code.
        let argumentTypes = argumentRepresentations ?? parameters.map(\.type)
        let resultType = resultRepresentation ?? returnType

        let accessModifier = modifiers.accessLevel
        let access = accessModifier.map { "\($0) " } ?? ""
        let memberAccess = accessModifier == "public" || accessModifier == "package" ? "\(accessModifier!) " : ""
        let nonisolated = modifiers.contains { $0.name.tokenKind == .keyword(.nonisolated) } ? "nonisolated " : ""
        let staticKeyword = isStatic ? "static " : ""
        let throwsKeyword = isThrowing ? "throws " : ""
        let structName = "__DatabaseFunction_\(displayName)"
        let varName = "$\(displayName)"

        let callParameters = zip(parameters, argumentTypes).map { parameter, type in
            let labelAndName =
                switch parameter.label {
                case nil: "_ \(parameter.name)"
                case parameter.name: parameter.name
                case let label?: "\(label) \(parameter.name)"
                }
            return "\(labelAndName): some StrataQueries.QueryExpression<\(type.trimmedDescription)>"
        }
        .joined(separator: ", ")
        let fragments = parameters.map { "\($0.name).queryFragment" }.joined(separator: ", ")
        let closureParameters = zip(parameters, argumentTypes)
            .map { "\($0.name): \($1.trimmedDescription)" }
            .joined(separator: ", ")

        let arguments = parameters.indices.map { index in
            let parameter = parameters[index]
            var value = parameter.name
            if let argumentRepresentations, !argumentRepresentations[index].isSpelled(like: parameter.type) {
                value += ".queryOutput"
            }
            return parameter.label.map { "\($0): \(value)" } ?? value
        }
        .joined(separator: ", ")
        var call = "\(isStatic ? "Self." : "")\(swiftName)(\(arguments))"
        if let resultRepresentation, !resultRepresentation.isSpelled(like: returnType) {
            call = "\(resultRepresentation.expressionSpelling)(queryOutput: \(call))"
        }
        if isThrowing {
            call = "try \(call)"
        }

        let structDecl: DeclSyntax = """
            \(raw: access)struct \(raw: structName): StrataQueries.ScalarDatabaseFunction {
                \(raw: memberAccess)let name = \(sqlName)
                let body: @Sendable (\(raw: argumentTypes.map(\.trimmedDescription).joined(separator: ", "))) \(raw: throwsKeyword)-> \(resultType)
                \(raw: memberAccess)func callAsFunction(\(raw: callParameters)) -> StrataQueries.SQLQueryExpression<\(resultType)> {
                    self.call([\(raw: fragments)])
                }
                \(raw: memberAccess)var databaseFunction: StrataSQLite.DatabaseFunction {
                    StrataSQLite.DatabaseFunction(\(sqlName), deterministic: \(deterministic), body)
                }
            }
            """
        let varDecl: DeclSyntax = """
            \(raw: access)\(raw: nonisolated)\(raw: staticKeyword)var \(raw: varName): \(raw: structName) {
                \(raw: structName) { (\(raw: closureParameters)) in
                    \(raw: call)
                }
            }
            """
        return [structDecl, varDecl]
    }

    /// The function type in `as: ((A, B) -> R).self`, or nil when the argument is not written
    /// that way.
    static func representationFunctionType(_ expression: ExprSyntax) -> FunctionTypeSyntax? {
        guard let member = expression.as(MemberAccessExprSyntax.self),
            member.declName.baseName.text == "self",
            let base = member.base
        else { return nil }
        // Types in expression position parse as expressions; parse the text again as a type.
        let type = TypeSyntax("\(raw: base.trimmedDescription)")
        guard !type.hasError else { return nil }
        return functionType(type)
    }

    private static func functionType(_ type: TypeSyntax) -> FunctionTypeSyntax? {
        if let function = type.as(FunctionTypeSyntax.self) {
            return function
        }
        if let tuple = type.as(TupleTypeSyntax.self), tuple.elements.count == 1, let element = tuple.elements.first,
            element.firstName == nil, element.ellipsis == nil
        {
            return functionType(element.type)
        }
        if let attributed = type.as(AttributedTypeSyntax.self) {
            return functionType(attributed.baseType)
        }
        return nil
    }
}

/// A parameter of a `@DatabaseFunction` as the generated code uses it.
private struct DatabaseFunctionParameter {
    /// The argument label, or nil for `_`.
    var label: String?
    /// The name used inside the generated code.
    var name: String
    var type: TypeSyntax
}

extension Syntax {
    /// Whether a function declared directly in this context is a member of a type.
    fileprivate var isTypeScope: Bool {
        `is`(StructDeclSyntax.self) || `is`(ClassDeclSyntax.self) || `is`(EnumDeclSyntax.self)
            || `is`(ActorDeclSyntax.self) || `is`(ExtensionDeclSyntax.self)
    }
}

extension DeclModifierListSyntax {
    /// The declaration's access level as a modifier for its peers (`open` becomes `public`).
    fileprivate var accessLevel: String? {
        for modifier in self where modifier.detail == nil {
            switch modifier.name.tokenKind {
            case .keyword(.open), .keyword(.public): return "public"
            case .keyword(.package): return "package"
            case .keyword(.internal): return "internal"
            case .keyword(.fileprivate): return "fileprivate"
            case .keyword(.private): return "private"
            default: continue
            }
        }
        return nil
    }
}

extension TypeSyntax {
    /// `Void`, `Swift.Void` or `()`.
    fileprivate var isVoid: Bool {
        if let tuple = self.as(TupleTypeSyntax.self) {
            return tuple.elements.isEmpty
        }
        let text = trimmedDescription.filter { !$0.isWhitespace }
        return text == "Void" || text == "Swift.Void"
    }

    /// Whether the two types are written the same, ignoring whitespace.
    fileprivate func isSpelled(like other: TypeSyntax) -> Bool {
        trimmedDescription.filter { !$0.isWhitespace } == other.trimmedDescription.filter { !$0.isWhitespace }
    }

    /// The type written so that `(queryOutput:)` can follow it in an expression: `T?` becomes
    /// `Optional<T>`.
    fileprivate var expressionSpelling: String {
        if let optional = self.as(OptionalTypeSyntax.self) {
            return "Optional<\(optional.wrappedType.trimmedDescription)>"
        }
        if let optional = self.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) {
            return "Optional<\(optional.wrappedType.trimmedDescription)>"
        }
        return trimmedDescription
    }
}

extension String {
    fileprivate var strippingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
