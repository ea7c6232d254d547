import MacroTesting
import StrataMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct TableMacroExpansionTests {
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
        } expansion: {
            """
            struct Player: Identifiable {
                let id: UUID
                var gameID: Game.ID
                var name = ""
                var score = 0
                var joinedAt: Date
                var nameLength: Int
                var isSelected = false
                var computed: Int { score * 2 }
                static var shared = 0
            }

            extension Player: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Player
                    typealias PrimaryKey = UUID
                    let id = StrataQueries.TableColumn<Player, UUID>("id")
                    let gameID = StrataQueries.TableColumn<Player, Game.ID>("gameID")
                    let name = StrataQueries.TableColumn<Player, String>("display_name")
                    let score = StrataQueries.TableColumn<Player, Int>("score")
                    let joinedAt = StrataQueries.TableColumn<Player, Date.UnixTimeRepresentation>("joinedAt")
                    let nameLength = StrataQueries.TableColumn<Player, Int>("nameLength")
                    var primaryKey: StrataQueries.TableColumn<Player, UUID> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().gameID, TableColumns().name, TableColumns().score, TableColumns().joinedAt, TableColumns().nameLength]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Player
                    var id: UUID?
                    var gameID: Game.ID
                    var name: String
                    var score: Int
                    var joinedAt: Date
                    init(id: UUID? = nil, gameID: Game.ID, name: String = "", score: Int = 0, joinedAt: Date) {
                        self.id = id
                        self.gameID = gameID
                        self.name = name
                        self.score = score
                        self.joinedAt = joinedAt
                    }
                    init(_ record: Player) {
                        self.id = record.id
                        self.gameID = record.gameID
                        self.name = record.name
                        self.score = record.score
                        self.joinedAt = record.joinedAt
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                        columns.append(self.gameID)
                        columns.append(self.name)
                        columns.append(self.score)
                        columns.append(Date.UnixTimeRepresentation(queryOutput: self.joinedAt))
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["id", "gameID", "display_name", "score", "joinedAt"]
                static let generatedColumnNames: [String] = ["nameLength"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 6
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(UUID.self)
                    self.gameID = try decoder.decode(Game.ID.self)
                    self.name = try decoder.decode(String.self)
                    self.score = try decoder.decode(Int.self)
                    self.joinedAt = try decoder.decode(as: Date.UnixTimeRepresentation.self)
                    self.nameLength = try decoder.decode(Int.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(self.gameID)
                    columns.append(self.name)
                    columns.append(self.score)
                    columns.append(Date.UnixTimeRepresentation(queryOutput: self.joinedAt))
                }
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
        } expansion: {
            """
            struct Person {
                var name: String
            }

            extension Person: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Person
                    let name = StrataQueries.TableColumn<Person, String>("name")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().name]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "people"
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

    @Test func tableWithoutPrimaryKey() {
        assertMacro {
            """
            @Table struct GameTag {
                var gameID: Int
                var tag: String
            }
            """
        } expansion: {
            """
            struct GameTag {
                var gameID: Int
                var tag: String
            }

            extension GameTag: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = GameTag
                    let gameID = StrataQueries.TableColumn<GameTag, Int>("gameID")
                    let tag = StrataQueries.TableColumn<GameTag, String>("tag")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().gameID, TableColumns().tag]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "gameTags"
                static let columnNames: [String] = ["gameID", "tag"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 2
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.gameID = try decoder.decode(Int.self)
                    self.tag = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.gameID)
                    columns.append(self.tag)
                }
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
        } expansion: {
            """
            public struct Tag: Identifiable, Sendable {
                public var id: Int
                public var title: String
            }

            extension Tag: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                public struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    public typealias QueryValue = Tag
                    public typealias PrimaryKey = Int
                    public let id = StrataQueries.TableColumn<Tag, Int>("id")
                    public let title = StrataQueries.TableColumn<Tag, String>("title")
                    public var primaryKey: StrataQueries.TableColumn<Tag, Int> {
                        self.id
                    }
                    public static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().title]
                    public static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    public var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    public init() {
                    }
                }
                public struct Draft: StrataQueries.TableDraft {
                    public typealias PrimaryTable = Tag
                    public var id: Int?
                    public var title: String
                    public init(id: Int? = nil, title: String) {
                        self.id = id
                        self.title = title
                    }
                    public init(_ record: Tag) {
                        self.id = record.id
                        self.title = record.title
                    }
                    public func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                        columns.append(self.title)
                    }
                }
                public static let columns = TableColumns()
                public static let tableName = "tags"
                public static let columnNames: [String] = ["id", "title"]
                public static let primaryKeyColumnNames: [String] = ["id"]
                public static let columnCount = 2
                public init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                    self.title = try decoder.decode(String.self)
                }
                public func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(self.title)
                }
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
        } expansion: {
            """
            package struct Tag {
                package var title: String
            }

            extension Tag: StrataQueries.Table {
                package struct TableColumns: StrataQueries.TableDefinition {
                    package typealias QueryValue = Tag
                    package let title = StrataQueries.TableColumn<Tag, String>("title")
                    package static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().title]
                    package static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    package var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    package init() {
                    }
                }
                package static let columns = TableColumns()
                package static let tableName = "tags"
                package static let columnNames: [String] = ["title"]
                package static let primaryKeyColumnNames: [String] = []
                package static let columnCount = 1
                package init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.title = try decoder.decode(String.self)
                }
                package func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.title)
                }
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
        } expansion: {
            """
            struct Country {
                var code: String
                var id: Int
                var name: String
            }

            extension Country: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Country
                    typealias PrimaryKey = String
                    let code = StrataQueries.TableColumn<Country, String>("code")
                    let id = StrataQueries.TableColumn<Country, Int>("id")
                    let name = StrataQueries.TableColumn<Country, String>("name")
                    var primaryKey: StrataQueries.TableColumn<Country, String> {
                        self.code
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().code, TableColumns().id, TableColumns().name]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Country
                    var code: String?
                    var id: Int
                    var name: String
                    init(code: String? = nil, id: Int, name: String) {
                        self.code = code
                        self.id = id
                        self.name = name
                    }
                    init(_ record: Country) {
                        self.code = record.code
                        self.id = record.id
                        self.name = record.name
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.code)
                        columns.append(self.id)
                        columns.append(self.name)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "countries"
                static let columnNames: [String] = ["code", "id", "name"]
                static let primaryKeyColumnNames: [String] = ["code"]
                static let columnCount = 3
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.code = try decoder.decode(String.self)
                    self.id = try decoder.decode(Int.self)
                    self.name = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.code)
                    columns.append(self.id)
                    columns.append(self.name)
                }
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
        } expansion: {
            """
            struct Event {
                var id: Int
                var name: String
            }

            extension Event: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Event
                    let id = StrataQueries.TableColumn<Event, Int>("id")
                    let name = StrataQueries.TableColumn<Event, String>("name")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().name]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "events"
                static let columnNames: [String] = ["id", "name"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 2
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                    self.name = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(self.name)
                }
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
        } expansion: {
            """
            struct Document: Identifiable {
                let id: UUID
                var title: String
            }

            extension Document: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Document
                    typealias PrimaryKey = UUID.BytesRepresentation
                    let id = StrataQueries.TableColumn<Document, UUID.BytesRepresentation>("id")
                    let title = StrataQueries.TableColumn<Document, String>("title")
                    var primaryKey: StrataQueries.TableColumn<Document, UUID.BytesRepresentation> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().title]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Document
                    var id: UUID?
                    var title: String
                    init(id: UUID? = nil, title: String) {
                        self.id = id
                        self.title = title
                    }
                    init(_ record: Document) {
                        self.id = record.id
                        self.title = record.title
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(UUID.BytesRepresentation?(queryOutput: self.id))
                        columns.append(self.title)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "documents"
                static let columnNames: [String] = ["id", "title"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 2
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(as: UUID.BytesRepresentation.self)
                    self.title = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(UUID.BytesRepresentation(queryOutput: self.id))
                    columns.append(self.title)
                }
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
        } expansion: {
            """
            struct Note: Identifiable {
                var id: Int?
                var body = ""
            }

            extension Note: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Note
                    typealias PrimaryKey = Int?
                    let id = StrataQueries.TableColumn<Note, Int?>("id")
                    let body = StrataQueries.TableColumn<Note, String>("body")
                    var primaryKey: StrataQueries.TableColumn<Note, Int?> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().body]
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Note
                    var id: Int?
                    var body: String
                    init(id: Int? = nil, body: String = "") {
                        self.id = id
                        self.body = body
                    }
                    init(_ record: Note) {
                        self.id = record.id
                        self.body = record.body
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                        columns.append(self.body)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "notes"
                static let columnNames: [String] = ["id", "body"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 2
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int?.self)
                    self.body = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(self.body)
                }
            }
            """
        }
    }
}
