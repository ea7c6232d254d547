import MacroTesting
import StrataMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
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
        } expansion: {
            """
            struct PlayerRow {
                let game: Game
                let playerCount: Int
                var latest: Date?
            }

            extension PlayerRow: StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord {
                struct Columns: StrataQueries.QueryExpression {
                    typealias QueryValue = PlayerRow
                    let queryFragment: StrataQueries.QueryFragment
                    init(game: some StrataQueries.QueryExpression<Game>, playerCount: some StrataQueries.QueryExpression<Int>, latest: some StrataQueries.QueryExpression<Date.UnixTimeRepresentation?>) {
                        self.queryFragment = [game.queryFragment, playerCount.queryFragment, latest.queryFragment].joined(separator: ", ")
                    }
                }
                static var columnCount: Int {
                    Game.columnCount + Int.columnCount + Date.UnixTimeRepresentation?.columnCount
                }
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.game = try decoder.read(Game.self)
                    self.playerCount = try decoder.read(Int.self)
                    self.latest = try decoder.decode(as: Date.UnixTimeRepresentation?.self)
                }
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
        } expansion: {
            """
            public struct Summary {
                public var title: String
                public var best: Player?
                public var isExpanded = false
                public var label: String { title }
                public static var empty = 0
            }

            extension Summary: StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord {
                public struct Columns: StrataQueries.QueryExpression {
                    public typealias QueryValue = Summary
                    public let queryFragment: StrataQueries.QueryFragment
                    public init(title: some StrataQueries.QueryExpression<String>, best: some StrataQueries.QueryExpression<Player?>) {
                        self.queryFragment = [title.queryFragment, best.queryFragment].joined(separator: ", ")
                    }
                }
                public static var columnCount: Int {
                    String.columnCount + Player?.columnCount
                }
                public init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.title = try decoder.read(String.self)
                    self.best = try decoder.read(Player?.self)
                }
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
        } expansion: {
            """
            struct Row {
                var tags: [String]
                var moreTags: [String]?
                var count: Int!
                var note: Optional<String>
            }

            extension Row: StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord {
                struct Columns: StrataQueries.QueryExpression {
                    typealias QueryValue = Row
                    let queryFragment: StrataQueries.QueryFragment
                    init(tags: some StrataQueries.QueryExpression<JSONRepresentation<[String]>>, moreTags: some StrataQueries.QueryExpression<JSONRepresentation<[String]>?>, count: some StrataQueries.QueryExpression<Int?>, note: some StrataQueries.QueryExpression<Optional<String>>) {
                        self.queryFragment = [tags.queryFragment, moreTags.queryFragment, count.queryFragment, note.queryFragment].joined(separator: ", ")
                    }
                }
                static var columnCount: Int {
                    JSONRepresentation<[String]>.columnCount + JSONRepresentation<[String]>?.columnCount + Int?.columnCount + Optional<String>.columnCount
                }
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.tags = try decoder.decode(as: JSONRepresentation<[String]>.self)
                    self.moreTags = try decoder.decode(as: JSONRepresentation<[String]>?.self)
                    self.count = try decoder.read(Int?.self)
                    self.note = try decoder.read(Optional<String>.self)
                }
            }
            """
        }
    }

    @Test func addsSendableWhenAsked() {
        assertMacro(["Selection": MacroSpec(type: SelectionMacro.self, conformances: ["Sendable"])]) {
            """
            @Selection public struct Row {
                public var count: Int
            }
            """
        } expansion: {
            """
            public struct Row {
                public var count: Int
            }

            extension Row: StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord, Swift.Sendable {
                public struct Columns: StrataQueries.QueryExpression {
                    public typealias QueryValue = Row
                    public let queryFragment: StrataQueries.QueryFragment
                    public init(count: some StrataQueries.QueryExpression<Int>) {
                        self.queryFragment = [count.queryFragment].joined(separator: ", ")
                    }
                }
                public static var columnCount: Int {
                    Int.columnCount
                }
                public init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.count = try decoder.read(Int.self)
                }
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
        } expansion: {
            """
            struct Nothing {
            }

            extension Nothing: StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord {
                struct Columns: StrataQueries.QueryExpression {
                    typealias QueryValue = Nothing
                    let queryFragment: StrataQueries.QueryFragment
                    init() {
                        self.queryFragment = StrataQueries.QueryFragment()
                    }
                }
                static var columnCount: Int {
                    0
                }
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                }
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
        } diagnostics: {
            """
            @Selection class Row {
            ┬─────────
            ╰─ 🛑 '@Selection' can only be applied to a struct; 'Row' is a class: declare it with 'struct' instead
               ✏️ Replace 'class' with 'struct'
                var count: Int
            }
            """
        } fixes: {
            """
            @Selection struct Row {
                var count: Int
            }
            """
        } expansion: {
            """
            struct Row {
                var count: Int
            }

            extension Row: StrataQueries.QueryDecodable, StrataSQLite.FetchableRecord {
                struct Columns: StrataQueries.QueryExpression {
                    typealias QueryValue = Row
                    let queryFragment: StrataQueries.QueryFragment
                    init(count: some StrataQueries.QueryExpression<Int>) {
                        self.queryFragment = [count.queryFragment].joined(separator: ", ")
                    }
                }
                static var columnCount: Int {
                    Int.columnCount
                }
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.count = try decoder.read(Int.self)
                }
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
        } diagnostics: {
            """
            @Selection struct Row {
                var count = computeCount()
                    ┬────
                    ╰─ 🛑 the column type of 'count' cannot be inferred from 'computeCount()'; add a type annotation: 'var count: <Type>'
                var names: [String]
                           ┬───────
                           ╰─ 🛑 property 'names' has collection type '[String]', which SQLite cannot store in a column; store it as JSON with '@Column(as: JSONRepresentation<[String]>.self)', or mark it '@Ephemeral' with a default value
                              ✏️ Store 'names' as JSON
                @Ephemeral var flag: Bool
                               ┬───
                               ╰─ 🛑 '@Ephemeral' property 'flag' needs a default value, which every decoded row gets; add one: '@Ephemeral var flag: <Type> = <value>'
                let kind = "row"
                         ┬──────
                         ╰─ 🛑 'let' property 'kind' has an initial value, so it cannot be decoded from a row; make it 'var', or mark it '@Ephemeral' if it is not a column
                            ✏️ Replace 'let' with 'var'
                            ✏️ Mark 'kind' '@Ephemeral'
            }
            """
        }
    }
}
