import MacroTesting
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@testable import StrataMacros

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct TableMacroNamingTests {
    @Test func tableNameConstant() {
        assertMacro {
            """
            @Table(Names.players) struct Player {
                var name: String
            }
            """
        } expansion: {
            """
            struct Player {
                var name: String
            }

            extension Player: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Player
                    let name = StrataQueries.TableColumn<Player, String>("name")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().name]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName: String = Names.players
                static let columnNames: [String] = ["name"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.name = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.name)
                }
            }
            """
        }
    }

    @Test func nestedType() {
        assertMacro {
            """
            enum Models {
                @Table struct Player: Identifiable {
                    let id: Int
                    var bestFriendID: Self.ID?
                }
            }
            """
        } expansion: {
            """
            enum Models {
                struct Player: Identifiable {
                    let id: Int
                    var bestFriendID: Self.ID?
                }
            }

            extension Models.Player: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Models.Player
                    typealias PrimaryKey = Int
                    let id = StrataQueries.TableColumn<Models.Player, Int>("id")
                    let bestFriendID = StrataQueries.TableColumn<Models.Player, Models.Player.ID?>("bestFriendID")
                    var primaryKey: StrataQueries.TableColumn<Models.Player, Int> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().bestFriendID]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Models.Player
                    var id: Int?
                    var bestFriendID: Models.Player.ID?
                    init(id: Int? = nil, bestFriendID: Models.Player.ID? = nil) {
                        self.id = id
                        self.bestFriendID = bestFriendID
                    }
                    init(_ record: Models.Player) {
                        self.id = record.id
                        self.bestFriendID = record.bestFriendID
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                        columns.append(self.bestFriendID)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["id", "bestFriendID"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 2
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                    self.bestFriendID = try decoder.decode(Models.Player.ID?.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(self.bestFriendID)
                }
            }
            """
        }
    }

    @Test func implicitlyUnwrappedColumn() {
        assertMacro {
            """
            @Table struct Player {
                var nickname: String!
            }
            """
        } expansion: {
            """
            struct Player {
                var nickname: String!
            }

            extension Player: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Player
                    let nickname = StrataQueries.TableColumn<Player, String?>("nickname")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().nickname]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["nickname"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.nickname = try decoder.decode(String?.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.nickname)
                }
            }
            """
        }
    }

    @Test func storeCollectionAsJSONFixIt() {
        assertMacro {
            """
            @Table struct Player {
                /// The player's tags.
                @available(*, deprecated) var tags: [String]?
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                /// The player's tags.
                @available(*, deprecated) var tags: [String]?
                                                    ┬────────
                                                    ╰─ 🛑 property 'tags' has collection type '[String]?', which SQLite cannot store in a column; store it as JSON with '@Column(as: JSONRepresentation<[String]>.self)', or mark it '@Ephemeral' with a default value
                                                       ✏️ Store 'tags' as JSON
            }
            """
        } fixes: {
            """
            @Table struct Player {
                /// The player's tags.
                @Column(as: JSONRepresentation<[String]>.self) @available(*, deprecated) var tags: [String]?
            }
            """
        } expansion: {
            """
            struct Player {
                /// The player's tags.
                @available(*, deprecated) var tags: [String]?
            }

            extension Player: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Player
                    let tags = StrataQueries.TableColumn<Player, JSONRepresentation<[String]>?>("tags")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().tags]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["tags"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.tags = try decoder.decode(as: JSONRepresentation<[String]>?.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(JSONRepresentation<[String]>?(queryOutput: self.tags))
                }
            }
            """
        }
    }

    /// The compiler lists the declared conformances the type lacks; `Sendable` among them
    /// (a public struct is not implicitly `Sendable`) is added.
    @Test func addsSendableWhenAsked() {
        assertMacro([
            "Table": MacroSpec(type: TableMacro.self, conformances: ["StrataQueries.Table", "StrataQueries.PrimaryKeyedTable", "Sendable"])
        ]) {
            """
            @Table public struct Label {
                public var name: String
            }
            """
        } expansion: {
            """
            public struct Label {
                public var name: String
            }

            extension Label: StrataQueries.Table, Swift.Sendable {
                public struct TableColumns: StrataQueries.TableDefinition {
                    public typealias QueryValue = Label
                    public let name = StrataQueries.TableColumn<Label, String>("name")
                    public static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().name]
                    public static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    public var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    public init() {
                    }
                }
                public static let columns = TableColumns()
                public static let tableName = "labels"
                public static let columnNames: [String] = ["name"]
                public static let primaryKeyColumnNames: [String] = []
                public static let columnCount = 1
                public init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.name = try decoder.decode(String.self)
                }
                public func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.name)
                }
            }
            """
        }
    }

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
}
