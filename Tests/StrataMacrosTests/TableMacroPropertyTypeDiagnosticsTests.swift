import MacroTesting
import StrataMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct TableMacroPropertyTypeDiagnosticsTests {
    @Test func unsupportedTypes() {
        assertMacro {
            """
            @Table struct Player {
                var position: (x: Int, y: Int)
                var onChange: () -> Void
                var handler: (@Sendable (Int) -> Void)?
                var value: any Equatable
                var shape: some Shape
                var anything: Any
                var composed: Codable & Sendable
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                var position: (x: Int, y: Int)
                              ┬───────────────
                              ╰─ 🛑 property 'position' has tuple type '(x: Int, y: Int)', which cannot be stored in a column; declare one property per column, or mark it '@Ephemeral' with a default value
                var onChange: () -> Void
                              ┬─────────
                              ╰─ 🛑 property 'onChange' has function type '() -> Void', which cannot be stored in a column; make it a method or a computed property, or mark it '@Ephemeral' with a default value
                var handler: (@Sendable (Int) -> Void)?
                             ┬─────────────────────────
                             ╰─ 🛑 property 'handler' has function type '(@Sendable (Int) -> Void)?', which cannot be stored in a column; make it a method or a computed property, or mark it '@Ephemeral' with a default value
                var value: any Equatable
                           ┬────────────
                           ╰─ 🛑 property 'value' has type 'any Equatable', which is not a concrete type and cannot be stored in a column; use a concrete column type, or mark it '@Ephemeral' with a default value
                var shape: some Shape
                           ┬─────────
                           ╰─ 🛑 property 'shape' has type 'some Shape', which is not a concrete type and cannot be stored in a column; use a concrete column type, or mark it '@Ephemeral' with a default value
                var anything: Any
                              ┬──
                              ╰─ 🛑 property 'anything' has type 'Any', which is not a concrete type and cannot be stored in a column; use a concrete column type, or mark it '@Ephemeral' with a default value
                var composed: Codable & Sendable
                              ┬─────────────────
                              ╰─ 🛑 property 'composed' has type 'Codable & Sendable', which is not a concrete type and cannot be stored in a column; use a concrete column type, or mark it '@Ephemeral' with a default value
            }
            """
        }
    }

    @Test func collectionsNeedARepresentation() {
        assertMacro {
            """
            @Table struct Player {
                var tags: [String]
                var scores: [String: Int]?
                var friends: Set<Int>
                @Column("list") var list: Array<Int>
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                var tags: [String]
                          ┬───────
                          ╰─ 🛑 property 'tags' has collection type '[String]', which SQLite cannot store in a column; store it as JSON with '@Column(as: JSONRepresentation<[String]>.self)', or mark it '@Ephemeral' with a default value
                             ✏️ Store 'tags' as JSON
                var scores: [String: Int]?
                            ┬─────────────
                            ╰─ 🛑 property 'scores' has collection type '[String: Int]?', which SQLite cannot store in a column; store it as JSON with '@Column(as: JSONRepresentation<[String: Int]>.self)', or mark it '@Ephemeral' with a default value
                               ✏️ Store 'scores' as JSON
                var friends: Set<Int>
                             ┬───────
                             ╰─ 🛑 property 'friends' has collection type 'Set<Int>', which SQLite cannot store in a column; store it as JSON with '@Column(as: JSONRepresentation<Set<Int>>.self)', or mark it '@Ephemeral' with a default value
                                ✏️ Store 'friends' as JSON
                @Column("list") var list: Array<Int>
                                          ┬─────────
                                          ╰─ 🛑 property 'list' has collection type 'Array<Int>', which SQLite cannot store in a column; store it as JSON with '@Column(as: JSONRepresentation<Array<Int>>.self)', or mark it '@Ephemeral' with a default value
            }
            """
        }
    }

    @Test func missingTypeAnnotation() {
        assertMacro {
            """
            @Table struct Player {
                var joinedAt = Date()
                var name = "a" + "b"
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                var joinedAt = Date()
                    ┬───────
                    ╰─ 🛑 the column type of 'joinedAt' cannot be inferred from 'Date()'; add a type annotation: 'var joinedAt: <Type>'
                var name = "a" + "b"
                    ┬───
                    ╰─ 🛑 the column type of 'name' cannot be inferred from '"a" + "b"'; add a type annotation: 'var name: <Type>'
            }
            """
        }
    }

    @Test func tuplePattern() {
        assertMacro {
            """
            @Table struct Player {
                var (a, b): (Int, Int)
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                var (a, b): (Int, Int)
                    ┬─────
                    ╰─ 🛑 '(a, b)' cannot be mapped to columns; declare one property per column
            }
            """
        }
    }
}
