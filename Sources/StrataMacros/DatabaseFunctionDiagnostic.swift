import SwiftDiagnostics
import SwiftSyntax

/// The errors `@DatabaseFunction` reports. Each one says what is wrong and how to fix it.
enum DatabaseFunctionDiagnostic: DiagnosticMessage {
    case notAFunction
    case protocolRequirement
    case instanceMethod(name: String)
    case async(name: String)
    case mainActor(name: String)
    case generic(name: String)
    case opaqueParameter(name: String)
    case inoutParameter(name: String)
    case variadicParameter(name: String)
    case noReturnValue(name: String)
    case nameNotLiteral
    case emptyName
    case representationNotFunctionType
    case representationArity(representations: Int, parameters: Int, name: String)

    var message: String {
        switch self {
        case .notAFunction:
            "@DatabaseFunction can only be applied to a function: declare a global or static 'func' "
                + "that returns a value, and put @DatabaseFunction on it"
        case .protocolRequirement:
            "@DatabaseFunction can't be applied to a protocol requirement, which has no body to call: "
                + "apply it to a global function or a static function of a concrete type"
        case .instanceMethod(let name):
            "'\(name)' is an instance method, but SQL calls a function without an instance: "
                + "make it 'static' (or move it to file scope)"
        case .async(let name):
            "'\(name)' is 'async', but SQLite calls functions synchronously while it runs a statement: "
                + "remove 'async'"
        case .mainActor(let name):
            "'\(name)' is isolated to the main actor, but SQLite calls functions on the thread that "
                + "runs the statement: remove '@MainActor' (mark it 'nonisolated' inside a main-actor type)"
        case .generic(let name):
            "'\(name)' is generic, but a SQL function needs concrete argument and result types: "
                + "replace the generic parameters with concrete types (declare one @DatabaseFunction per type)"
        case .opaqueParameter(let name):
            "parameter '\(name)' has an opaque 'some' type, which makes the function generic: "
                + "give it a concrete type such as 'Int' or 'String'"
        case .inoutParameter(let name):
            "parameter '\(name)' is 'inout', but SQL passes arguments by value: remove 'inout'"
        case .variadicParameter(let name):
            "parameter '\(name)' is variadic, but a SQL function takes a fixed number of arguments: "
                + "declare one parameter per argument"
        case .noReturnValue(let name):
            "'\(name)' returns no value, but a SQL function must return one: add a return type "
                + "(return an optional such as 'Int?' and 'nil' for NULL)"
        case .nameNotLiteral:
            "the SQL name must be a string literal without interpolation, for example "
                + "@DatabaseFunction(\"is_winner\"); omit it to use the Swift name"
        case .emptyName:
            "the SQL name can't be empty: pass a name, or omit the argument to use the Swift name"
        case .representationNotFunctionType:
            "'as:' must be a function type written with '.self', giving the stored representation "
                + "of each argument and of the result, for example "
                + "'as: ((UUID.BytesRepresentation, Int) -> Bool).self'"
        case .representationArity(let representations, let parameters, let name):
            "'as:' lists \(representations) argument \(representations == 1 ? "type" : "types"), "
                + "but '\(name)' takes \(parameters) \(parameters == 1 ? "parameter" : "parameters"): "
                + "list exactly one representation type per parameter, in order"
        }
    }

    var diagnosticID: MessageID {
        let id =
            switch self {
            case .notAFunction: "notAFunction"
            case .protocolRequirement: "protocolRequirement"
            case .instanceMethod: "instanceMethod"
            case .async: "async"
            case .mainActor: "mainActor"
            case .generic: "generic"
            case .opaqueParameter: "opaqueParameter"
            case .inoutParameter: "inoutParameter"
            case .variadicParameter: "variadicParameter"
            case .noReturnValue: "noReturnValue"
            case .nameNotLiteral: "nameNotLiteral"
            case .emptyName: "emptyName"
            case .representationNotFunctionType: "representationNotFunctionType"
            case .representationArity: "representationArity"
            }
        return MessageID(domain: "StrataMacros.DatabaseFunction", id: id)
    }

    var severity: DiagnosticSeverity { .error }
}

/// The fix-its `@DatabaseFunction` offers.
struct DatabaseFunctionFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "StrataMacros.DatabaseFunction", id: message) }

    static let removeAsync = Self(message: "Remove 'async'")
    static let removeInout = Self(message: "Remove 'inout'")
    static let addStatic = Self(message: "Make it 'static'")
}
