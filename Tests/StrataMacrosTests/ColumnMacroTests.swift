import MacroTesting
import StrataMacros
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct ColumnMacroTests {
    @Test func columnOnAPropertyExpandsToNothing() {
        assertMacro {
            """
            struct Player {
                @Column("display_name") var name: String
                @Column(as: Date.UnixTimeRepresentation.self, generated: .virtual) var at: Date
            }
            """
        } expansion: {
            """
            struct Player {
                var name: String
                var at: Date
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
        } expansion: {
            """
            struct Player {
                var isSelected = false
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
        } diagnostics: {
            """
            struct Player {
                @Column func name() -> String { "" }
                ┬──────
                ╰─ 🛑 '@Column' can only be applied to a stored property of a '@Table' or '@Selection' struct; remove it
                   ✏️ Remove '@Column'
            }
            """
        } fixes: {
            """
            struct Player {
                func name() -> String { "" }
            }
            """
        } expansion: {
            """
            struct Player {
                func name() -> String { "" }
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
        } diagnostics: {
            """
            struct Player {
                @Ephemeral func reset() {}
                ┬─────────
                ╰─ 🛑 '@Ephemeral' can only be applied to a stored property of a '@Table' or '@Selection' struct; remove it
                   ✏️ Remove '@Ephemeral'
            }
            """
        } fixes: {
            """
            struct Player {
                func reset() {}
            }
            """
        } expansion: {
            """
            struct Player {
                func reset() {}
            }
            """
        }
    }
}
