import MacroTesting
import Testing

@testable import StrataMacros

@Suite(.macros(["Table": TableMacro.self, "Column": ColumnMacro.self, "Ephemeral": EphemeralMacro.self, "Selection": SelectionMacro.self], record: .missing))
struct ColumnMacroTests {
    @Test func columnOnAPropertyExpandsToNothing() {
        assertMacro {
            """
            struct Player {
                @Column("display_name") var name: String
                @Column(as: Date.UnixTimeRepresentation.self, generated: .virtual) var at: Date
            }
            """
        }
    }

    @Test func ephemeralOnAPropertyExpandsToNothing() {
        assertMacro {
            """
            struct Player {
                @Ephemeral var isSelected = false
            }
            """
        }
    }

    @Test func columnOnAFunction() {
        assertMacro {
            """
            struct Player {
                @Column func name() -> String { "" }
            }
            """
        }
    }

    @Test func ephemeralOnAFunction() {
        assertMacro {
            """
            struct Player {
                @Ephemeral func reset() {}
            }
            """
        }
    }
}
