import SwiftDiagnostics
import SwiftSyntax

/// A diagnostic of `@Table`, `@Selection`, `@Column` or `@Ephemeral`.
struct PropertyDiagnostic: DiagnosticMessage {
    let message: String
    let id: String
    let severity: DiagnosticSeverity

    var diagnosticID: MessageID { MessageID(domain: "StrataMacros", id: id) }

    static func error(_ id: String, _ message: String) -> Self {
        Self(message: message, id: id, severity: .error)
    }

    static func warning(_ id: String, _ message: String) -> Self {
        Self(message: message, id: id, severity: .warning)
    }
}

/// The message of a fix-it of `@Table`, `@Selection`, `@Column` or `@Ephemeral`.
struct PropertyFixItMessage: FixItMessage {
    let message: String
    let id: String

    var fixItID: MessageID { MessageID(domain: "StrataMacros", id: id) }

    init(_ id: String, _ message: String) {
        self.id = id
        self.message = message
    }
}

/// Every message the property analysis reports, in one place so their wording stays
/// consistent: each says what is wrong and how to fix it.
enum PropertyMessages {
    static func notAStruct(macro: String, kind: String, name: String?) -> PropertyDiagnostic {
        let subject: String
        let fix: String
        switch kind {
        case "extension":
            subject = "this is an extension" + (name.map { " of '\($0)'" } ?? "")
            fix = "apply it to the declaration of the struct instead"
        case "protocol":
            subject = "\(quoted(name)) is a protocol"
            fix = "apply it to each struct that adopts the protocol"
        case "enum":
            subject = "\(quoted(name)) is an enum"
            fix = "model the rows with a struct (an enum's cases are not columns)"
        default:
            subject = "\(quoted(name)) is \(article(kind)) \(kind)"
            fix = "declare it with 'struct' instead"
        }
        return .error("notAStruct", "'@\(macro)' can only be applied to a struct; \(subject): \(fix)")
    }

    private static func quoted(_ name: String?) -> String {
        name.map { "'\($0)'" } ?? "this"
    }

    static func genericTable(name: String) -> PropertyDiagnostic {
        .error(
            "genericTable",
            "'@Table' cannot be applied to the generic struct '\(name)', since a table's columns are static stored properties; declare a non-generic struct for each table"
        )
    }

    static func missingPrimaryKey(type: String, reason: MissingKeyReason) -> PropertyDiagnostic {
        let why: String
        let fix: String
        switch reason {
        case .noStoredID:
            why = "has no primary-key column"
            fix = "add a stored 'id' property, or mark the key column '@Column(primaryKey: true)'"
        case .ephemeralID:
            why = "its 'id' property is '@Ephemeral', so it has no primary-key column"
            fix = "remove '@Ephemeral' from 'id', or mark the key column '@Column(primaryKey: true)'"
        case .notAKeyID:
            why = "its 'id' property is marked 'primaryKey: false', so it has no primary-key column"
            fix = "mark the key column '@Column(primaryKey: true)'"
        }
        return .error("missingPrimaryKey", "'\(type)' conforms to 'Identifiable' but \(why); \(fix)")
    }

    enum MissingKeyReason {
        case noStoredID, ephemeralID, notAKeyID
    }

    static func compositePrimaryKey(first: String, second: String) -> PropertyDiagnostic {
        .error(
            "compositePrimaryKey",
            "'\(first)' and '\(second)' are both marked 'primaryKey: true', but composite primary keys are not supported; keep a single primary-key column and declare a UNIQUE constraint over the other columns in the table's SQL"
        )
    }

    static func generatedPrimaryKey(property: String, isImplicit: Bool) -> PropertyDiagnostic {
        let fix =
            isImplicit
            ? "remove 'generated:', or mark another column '@Column(primaryKey: true)'"
            : "remove 'primaryKey: true' or 'generated:'"
        return .error(
            "generatedPrimaryKey",
            "generated column '\(property)' cannot be the primary key (SQLite does not allow generated columns in a PRIMARY KEY); \(fix)")
    }

    static func tupleType(property: String, type: String) -> PropertyDiagnostic {
        .error(
            "unsupportedType",
            "property '\(property)' has tuple type '\(type)', which cannot be stored in a column; declare one property per column, or mark it '@Ephemeral' with a default value"
        )
    }

    static func functionType(property: String, type: String) -> PropertyDiagnostic {
        .error(
            "unsupportedType",
            "property '\(property)' has function type '\(type)', which cannot be stored in a column; make it a method or a computed property, or mark it '@Ephemeral' with a default value"
        )
    }

    static func existentialType(property: String, type: String) -> PropertyDiagnostic {
        .error(
            "unsupportedType",
            "property '\(property)' has type '\(type)', which is not a concrete type and cannot be stored in a column; use a concrete column type, or mark it '@Ephemeral' with a default value"
        )
    }

    static func collectionType(property: String, type: String, element: String) -> PropertyDiagnostic {
        .error(
            "unsupportedType",
            "property '\(property)' has collection type '\(type)', which SQLite cannot store in a column; store it as JSON with '@Column(as: JSONRepresentation<\(element)>.self)', or mark it '@Ephemeral' with a default value"
        )
    }

    static func missingTypeAnnotation(property: String, initializer: String?) -> PropertyDiagnostic {
        let from = initializer.map { "from '\($0)'" } ?? "without an initial value"
        return .error(
            "missingTypeAnnotation",
            "the column type of '\(property)' cannot be inferred \(from); add a type annotation: 'var \(property): <Type>'")
    }

    static func unsupportedPattern(pattern: String) -> PropertyDiagnostic {
        .error(
            "unsupportedPattern",
            "'\(pattern)' cannot be mapped to columns; declare one property per column")
    }

    static func ephemeralWithoutDefault(property: String) -> PropertyDiagnostic {
        .error(
            "ephemeralWithoutDefault",
            "'@Ephemeral' property '\(property)' needs a default value, which every decoded row gets; add one: '@Ephemeral var \(property): <Type> = <value>'"
        )
    }

    static func letWithInitializer(property: String) -> PropertyDiagnostic {
        .error(
            "letWithInitializer",
            "'let' property '\(property)' has an initial value, so it cannot be decoded from a row; make it 'var', or mark it '@Ephemeral' if it is not a column"
        )
    }

    static func columnAndEphemeral(property: String) -> PropertyDiagnostic {
        .error(
            "columnAndEphemeral",
            "property '\(property)' cannot be both '@Column' and '@Ephemeral'; remove '@Ephemeral' if it is a column, or '@Column' if it is not"
        )
    }

    static func emptyColumnName(property: String) -> PropertyDiagnostic {
        .error(
            "emptyColumnName",
            "the column name of '\(property)' is empty; remove the argument to use the property name '\(property)', or pass a non-empty name"
        )
    }

    static func emptyTableName(defaultName: String) -> PropertyDiagnostic {
        .error(
            "emptyTableName",
            "the table name is empty; remove the argument to use the default name '\(defaultName)', or pass a non-empty name")
    }

    static func columnNameNotALiteral(property: String) -> PropertyDiagnostic {
        .error(
            "columnNameNotALiteral",
            "the column name of '\(property)' must be a string literal, such as '@Column(\"\(property)\")'")
    }

    static func representationNotAType(property: String) -> PropertyDiagnostic {
        .error(
            "representationNotAType",
            "'as:' of '\(property)' must name a type with '.self', such as '@Column(as: Date.UnixTimeRepresentation.self)'")
    }

    static func primaryKeyNotALiteral(property: String) -> PropertyDiagnostic {
        .error(
            "primaryKeyNotALiteral",
            "'primaryKey:' of '\(property)' must be 'true' or 'false'")
    }

    static func duplicateColumnName(column: String, first: String, second: String) -> PropertyDiagnostic {
        .error(
            "duplicateColumnName",
            "properties '\(first)' and '\(second)' both map to column '\(column)'; give one of them another name with '@Column(\"…\")'")
    }

    static func columnOnNonStoredProperty(attribute: String, property: String, kind: String) -> PropertyDiagnostic {
        .error(
            "columnOnNonStoredProperty",
            "'@\(attribute)' cannot be applied to \(kind) '\(property)'; only stored instance properties are columns: remove '@\(attribute)'"
        )
    }

    static func ephemeralOnNonStoredProperty(property: String, kind: String) -> PropertyDiagnostic {
        .warning(
            "ephemeralOnNonStoredProperty",
            "'@Ephemeral' has no effect on \(kind) '\(property)', which is never a column; remove it")
    }

    static func columnNotOnProperty(attribute: String) -> PropertyDiagnostic {
        .error(
            "columnNotOnProperty",
            "'@\(attribute)' can only be applied to a stored property of a '@Table' or '@Selection' struct; remove it")
    }

    static func multipleBindingsWithOptions(attribute: String) -> PropertyDiagnostic {
        .error(
            "multipleBindingsWithOptions",
            "'@\(attribute)' with a name or a primary key applies to a single property; declare each property separately")
    }

    private static func article(_ word: String) -> String {
        ["a", "e", "i", "o", "u"].contains(word.first.map(String.init) ?? "") ? "an" : "a"
    }
}
