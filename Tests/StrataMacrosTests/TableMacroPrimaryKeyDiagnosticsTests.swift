import MacroTesting
import StrataMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct TableMacroPrimaryKeyDiagnosticsTests {
    @Test func identifiableWithoutID() {
        assertMacro {
            """
            @Table struct Player: Identifiable {
                var name: String
                var id: String { name }
            }
            """
        } diagnostics: {
            """
            @Table struct Player: Identifiable {
                                  ┬───────────
                                  ╰─ 🛑 'Player' conforms to 'Identifiable' but has no primary-key column; add a stored 'id' property, or mark the key column '@Column(primaryKey: true)'
                var name: String
                var id: String { name }
            }
            """
        }
    }

    @Test func identifiableWithEphemeralID() {
        assertMacro {
            """
            @Table struct Player: Identifiable {
                @Ephemeral var id = UUID()
                var name: String
            }
            """
        } diagnostics: {
            """
            @Table struct Player: Identifiable {
                                  ┬───────────
                                  ╰─ 🛑 'Player' conforms to 'Identifiable' but its 'id' property is '@Ephemeral', so it has no primary-key column; remove '@Ephemeral' from 'id', or mark the key column '@Column(primaryKey: true)'
                @Ephemeral var id = UUID()
                var name: String
            }
            """
        }
    }

    @Test func identifiableWithIDNotAKey() {
        assertMacro {
            """
            @Table struct Player: Identifiable {
                @Column(primaryKey: false) var id: Int
                var name: String
            }
            """
        } diagnostics: {
            """
            @Table struct Player: Identifiable {
                                  ┬───────────
                                  ╰─ 🛑 'Player' conforms to 'Identifiable' but its 'id' property is marked 'primaryKey: false', so it has no primary-key column; mark the key column '@Column(primaryKey: true)'
                @Column(primaryKey: false) var id: Int
                var name: String
            }
            """
        }
    }

    @Test func compositePrimaryKey() {
        assertMacro {
            """
            @Table struct Membership {
                @Column(primaryKey: true) var userID: Int
                @Column(primaryKey: true) var groupID: Int
            }
            """
        } diagnostics: {
            """
            @Table struct Membership {
                @Column(primaryKey: true) var userID: Int
                @Column(primaryKey: true) var groupID: Int
                        ┬───────────────
                        ╰─ 🛑 'userID' and 'groupID' are both marked 'primaryKey: true', but composite primary keys are not supported; keep a single primary-key column and declare a UNIQUE constraint over the other columns in the table's SQL
            }
            """
        }
    }

    @Test func generatedPrimaryKey() {
        assertMacro {
            """
            @Table struct Player {
                @Column(primaryKey: true, generated: .stored) var key: String
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                @Column(primaryKey: true, generated: .stored) var key: String
                        ┬────────────────
                        ╰─ 🛑 generated column 'key' cannot be the primary key (SQLite does not allow generated columns in a PRIMARY KEY); remove 'primaryKey: true' or 'generated:'
            }
            """
        }
    }

    @Test func generatedID() {
        assertMacro {
            """
            @Table struct Player: Identifiable {
                @Column(generated: .virtual) var id: Int
            }
            """
        } diagnostics: {
            """
            @Table struct Player: Identifiable {
                @Column(generated: .virtual) var id: Int
                                                 ┬─
                                                 ╰─ 🛑 generated column 'id' cannot be the primary key (SQLite does not allow generated columns in a PRIMARY KEY); remove 'generated:', or mark another column '@Column(primaryKey: true)'
            }
            """
        }
    }
}
