import MacroTesting
import Testing

@testable import StrataMacros

@Suite(.macros(["Table": TableMacro.self, "Column": ColumnMacro.self, "Ephemeral": EphemeralMacro.self, "Selection": SelectionMacro.self], record: .missing))
struct SelectionMacroTests {
    @Test func playerRow() {
        assertMacro {
            """
            @Selection struct PlayerRow {
                let game: Game
                let playerCount: Int
                @Column(as: Date.UnixTimeRepresentation.self) var latest: Date?
            }
            """
        }
    }

    @Test func publicSelectionSkipsNonColumns() {
        assertMacro {
            """
            @Selection public struct Summary {
                public var title: String
                public var best: Player?
                @Ephemeral public var isExpanded = false
                public var label: String { title }
                public static var empty = 0
            }
            """
        }
    }

    @Test func representationsThatNeedParentheses() {
        assertMacro {
            """
            @Selection struct Row {
                @Column(as: JSONRepresentation<[String]>.self) var tags: [String]
                @Column(as: JSONRepresentation<[String]>?.self) var moreTags: [String]?
                var count: Int!
                var note: Optional<String>
            }
            """
        }
    }

    @Test func emptySelection() {
        assertMacro {
            """
            @Selection struct Nothing {
            }
            """
        }
    }

    @Test func classIsNotAStruct() {
        assertMacro {
            """
            @Selection class Row {
                var count: Int
            }
            """
        }
    }

    @Test func propertyDiagnostics() {
        assertMacro {
            """
            @Selection struct Row {
                var count = computeCount()
                var names: [String]
                @Ephemeral var flag: Bool
                let kind = "row"
            }
            """
        }
    }
}
