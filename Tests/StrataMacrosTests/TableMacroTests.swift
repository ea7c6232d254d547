import MacroTesting
import Testing

@testable import StrataMacros

@Suite(.macros(["Table": TableMacro.self, "Column": ColumnMacro.self, "Ephemeral": EphemeralMacro.self, "Selection": SelectionMacro.self], record: .missing))
struct TableMacroTests {
    // MARK: - Expansions

    @Test func player() {
        assertMacro {
            """
            @Table struct Player: Identifiable {
                let id: UUID
                var gameID: Game.ID
                @Column("display_name") var name = ""
                var score = 0
                @Column(as: Date.UnixTimeRepresentation.self) var joinedAt: Date
                @Column(generated: .virtual) var nameLength: Int
                @Ephemeral var isSelected = false
                var computed: Int { score * 2 }
                static var shared = 0
            }
            """
        }
    }

    @Test func explicitTableName() {
        assertMacro {
            """
            @Table("people") struct Person {
                var name: String
            }
            """
        }
    }

    @Test func tableWithoutPrimaryKey() {
        assertMacro {
            """
            @Table struct GameTag {
                var gameID: Int
                var tag: String
            }
            """
        }
    }

    @Test func publicTable() {
        assertMacro {
            """
            @Table public struct Tag: Identifiable, Sendable {
                public var id: Int
                public var title: String
            }
            """
        }
    }

    @Test func packageTable() {
        assertMacro {
            """
            @Table package struct Tag {
                package var title: String
            }
            """
        }
    }

    @Test func explicitPrimaryKey() {
        assertMacro {
            """
            @Table struct Country {
                @Column(primaryKey: true) var code: String
                var id: Int
                var name: String
            }
            """
        }
    }

    @Test func idNotAPrimaryKey() {
        assertMacro {
            """
            @Table struct Event {
                @Column(primaryKey: false) var id: Int
                var name: String
            }
            """
        }
    }

    @Test func representedPrimaryKey() {
        assertMacro {
            """
            @Table struct Document: Identifiable {
                @Column(as: UUID.BytesRepresentation.self) let id: UUID
                var title: String
            }
            """
        }
    }

    @Test func optionalPrimaryKey() {
        assertMacro {
            """
            @Table struct Note: Identifiable {
                var id: Int?
                var body = ""
            }
            """
        }
    }

    @Test func optionalRepresentedColumns() {
        assertMacro {
            """
            @Table struct Reminder: Identifiable {
                let id: Int
                @Column(as: Date.UnixTimeRepresentation.self) var dueAt: Date?
                @Column(as: Date.ISO8601Representation?.self) var completedAt: Date?
                @Column(as: JSONRepresentation<[String]>.self) var tags: [String] = []
                var notes: String?
                var priority: Optional<Int>
            }
            """
        }
    }

    @Test func inferredLiteralTypes() {
        assertMacro {
            """
            @Table struct Settings {
                var count = 0
                var offset = -1
                var ratio = 0.5
                var delta = -0.25
                var label = "x"
                var isOn = true
                var isOff = false
            }
            """
        }
    }

    @Test func selfTypesBackticksObserversAndMultipleBindings() {
        assertMacro {
            """
            @Table struct Node: Identifiable {
                var id: Int
                var parentID: Self.ID?
                var `default`: Bool
                var width, height: Double
                var label: String {
                    didSet { print(label) }
                }
                lazy var cache: [Int] = []
            }
            """
        }
    }

    @Test func generatedColumnWithLet() {
        assertMacro {
            """
            @Table struct Line: Identifiable {
                let id: Int
                var text: String
                @Column("text_length", generated: .stored) let textLength: Int
                @Column(generated: .virtual) let isEmpty: Bool
            }
            """
        }
    }

    @Test func qualifiedAttributes() {
        assertMacro {
            """
            @Table struct Item {
                @StrataQueries.Column("item_id", primaryKey: true) var itemID: Int
                @StrataQueries.Ephemeral var isExpanded = false
            }
            """
        }
    }

    @Test func nameEscaping() {
        assertMacro {
            #"""
            @Table("odd \"name\"") struct Odd {
                @Column("a \"quoted\" column") var value: Int
            }
            """#
        }
    }

    @Test func tableNameConstant() {
        assertMacro {
            """
            @Table(Names.players) struct Player {
                var name: String
            }
            """
        }
    }

    // MARK: - Table names

    @Test func defaultTableNames() {
        #expect(defaultTableName(forTypeNamed: "Player") == "players")
        #expect(defaultTableName(forTypeNamed: "Tag") == "tags")
        #expect(defaultTableName(forTypeNamed: "Category") == "categories")
        #expect(defaultTableName(forTypeNamed: "RemindersList") == "remindersLists")
        #expect(defaultTableName(forTypeNamed: "URLItem") == "urlItems")
        #expect(defaultTableName(forTypeNamed: "URL") == "urls")
        #expect(defaultTableName(forTypeNamed: "Match") == "matches")
        #expect(defaultTableName(forTypeNamed: "Wish") == "wishes")
        #expect(defaultTableName(forTypeNamed: "Box") == "boxes")
        #expect(defaultTableName(forTypeNamed: "Status") == "statuses")
        #expect(defaultTableName(forTypeNamed: "Quiz") == "quizes")
        #expect(defaultTableName(forTypeNamed: "Key") == "keys")
        #expect(defaultTableName(forTypeNamed: "Day") == "days")
        #expect(defaultTableName(forTypeNamed: "GameCategory") == "gameCategories")
        #expect(defaultTableName(forTypeNamed: "ID2Map") == "id2Maps")
        #expect(defaultTableName(forTypeNamed: "player") == "players")
    }

    // MARK: - Diagnostics: the declaration

    @Test func classIsNotAStruct() {
        assertMacro {
            """
            @Table class Player {
                var id: Int
            }
            """
        }
    }

    @Test func actorIsNotAStruct() {
        assertMacro {
            """
            @Table actor Player {
                var id: Int
            }
            """
        }
    }

    @Test func enumIsNotAStruct() {
        assertMacro {
            """
            @Table enum Kind {
                case a
            }
            """
        }
    }

    @Test func protocolIsNotAStruct() {
        assertMacro {
            """
            @Table protocol Named {
                var name: String { get }
            }
            """
        }
    }

    @Test func extensionIsNotAStruct() {
        assertMacro {
            """
            @Table extension Player {
            }
            """
        }
    }

    @Test func emptyTableName() {
        assertMacro {
            """
            @Table("") struct Player {
                var name: String
            }
            """
        }
    }

    // MARK: - Diagnostics: primary keys

    @Test func identifiableWithoutID() {
        assertMacro {
            """
            @Table struct Player: Identifiable {
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
        }
    }

    @Test func generatedPrimaryKey() {
        assertMacro {
            """
            @Table struct Player {
                @Column(primaryKey: true, generated: .stored) var key: String
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
        }
    }

    // MARK: - Diagnostics: property types

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
        }
    }

    @Test func tuplePattern() {
        assertMacro {
            """
            @Table struct Player {
                var (a, b): (Int, Int)
            }
            """
        }
    }

    // MARK: - Diagnostics: attributes

    @Test func ephemeralWithoutDefault() {
        assertMacro {
            """
            @Table struct Player {
                var name: String
                @Ephemeral var isSelected: Bool
                @Ephemeral let note: String?
                @Ephemeral var highlight: String?
            }
            """
        }
    }

    @Test func letWithInitializer() {
        assertMacro {
            """
            @Table struct Player {
                let kind = "player"
                var name: String
            }
            """
        }
    }

    @Test func columnAndEphemeral() {
        assertMacro {
            """
            @Table struct Player {
                @Column("n") @Ephemeral var name = ""
            }
            """
        }
    }

    @Test func emptyColumnName() {
        assertMacro {
            """
            @Table struct Player {
                @Column("") var name: String
            }
            """
        }
    }

    @Test func malformedColumnArguments() {
        assertMacro {
            """
            @Table struct Player {
                @Column(Names.name) var name: String
                @Column(as: Date.UnixTimeRepresentation) var date: Date
                @Column(primaryKey: isKey) var id: Int
            }
            """
        }
    }

    @Test func duplicateColumnNames() {
        assertMacro {
            """
            @Table struct Player {
                var name: String
                @Column("name") var displayName: String
            }
            """
        }
    }

    @Test func columnOnNonStoredProperties() {
        assertMacro {
            """
            @Table struct Player {
                var score: Int
                @Column("double") var doubled: Int { score * 2 }
                @Column static var count = 0
                @Ephemeral var tripled: Int { score * 3 }
            }
            """
        }
    }

    @Test func columnOptionsOnMultipleBindings() {
        assertMacro {
            """
            @Table struct Player {
                @Column("x") var a, b: Int
            }
            """
        }
    }
}
