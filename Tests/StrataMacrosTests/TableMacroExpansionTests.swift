import MacroTesting
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@testable import StrataMacros

@Suite(.macros(["Table": TableMacro.self, "Column": ColumnMacro.self, "Ephemeral": EphemeralMacro.self, "Selection": SelectionMacro.self], record: .never))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
        } expansion: {
            """
            struct Reminder: Identifiable {
                let id: Int
                var dueAt: Date?
                var completedAt: Date?
                var tags: [String] = []
                var notes: String?
                var priority: Optional<Int>
            }

            extension Reminder: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Reminder
                    typealias PrimaryKey = Int
                    let id = StrataQueries.TableColumn<Reminder, Int>("id")
                    let dueAt = StrataQueries.TableColumn<Reminder, Date.UnixTimeRepresentation?>("dueAt")
                    let completedAt = StrataQueries.TableColumn<Reminder, Date.ISO8601Representation?>("completedAt")
                    let tags = StrataQueries.TableColumn<Reminder, JSONRepresentation<[String]>>("tags")
                    let notes = StrataQueries.TableColumn<Reminder, String?>("notes")
                    let priority = StrataQueries.TableColumn<Reminder, Optional<Int>>("priority")
                    var primaryKey: StrataQueries.TableColumn<Reminder, Int> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().dueAt, TableColumns().completedAt, TableColumns().tags, TableColumns().notes, TableColumns().priority]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Reminder
                    var id: Int?
                    var dueAt: Date?
                    var completedAt: Date?
                    var tags: [String]
                    var notes: String?
                    var priority: Optional<Int>
                    init(id: Int? = nil, dueAt: Date? = nil, completedAt: Date? = nil, tags: [String] = [], notes: String? = nil, priority: Optional<Int> = nil) {
                        self.id = id
                        self.dueAt = dueAt
                        self.completedAt = completedAt
                        self.tags = tags
                        self.notes = notes
                        self.priority = priority
                    }
                    init(_ record: Reminder) {
                        self.id = record.id
                        self.dueAt = record.dueAt
                        self.completedAt = record.completedAt
                        self.tags = record.tags
                        self.notes = record.notes
                        self.priority = record.priority
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                        columns.append(Date.UnixTimeRepresentation?(queryOutput: self.dueAt))
                        columns.append(Date.ISO8601Representation?(queryOutput: self.completedAt))
                        columns.append(JSONRepresentation<[String]>(queryOutput: self.tags))
                        columns.append(self.notes)
                        columns.append(self.priority)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "reminders"
                static let columnNames: [String] = ["id", "dueAt", "completedAt", "tags", "notes", "priority"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 6
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                    self.dueAt = try decoder.decode(as: Date.UnixTimeRepresentation?.self)
                    self.completedAt = try decoder.decode(as: Date.ISO8601Representation?.self)
                    self.tags = try decoder.decode(as: JSONRepresentation<[String]>.self)
                    self.notes = try decoder.decode(String?.self)
                    self.priority = try decoder.decode(Optional<Int>.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(Date.UnixTimeRepresentation?(queryOutput: self.dueAt))
                    columns.append(Date.ISO8601Representation?(queryOutput: self.completedAt))
                    columns.append(JSONRepresentation<[String]>(queryOutput: self.tags))
                    columns.append(self.notes)
                    columns.append(self.priority)
                }
            }
            """
        }
    }

    @Test func inferredLiteralTypes() {
        assertMacro {
            """
            @Table struct Preference {
                var count = 0
                var offset = -1
                var ratio = 0.5
                var delta = -0.25
                var label = "x"
                var isOn = true
                var isOff = false
            }
            """
        } expansion: {
            """
            struct Preference {
                var count = 0
                var offset = -1
                var ratio = 0.5
                var delta = -0.25
                var label = "x"
                var isOn = true
                var isOff = false
            }

            extension Preference: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Preference
                    let count = StrataQueries.TableColumn<Preference, Int>("count")
                    let offset = StrataQueries.TableColumn<Preference, Int>("offset")
                    let ratio = StrataQueries.TableColumn<Preference, Double>("ratio")
                    let delta = StrataQueries.TableColumn<Preference, Double>("delta")
                    let label = StrataQueries.TableColumn<Preference, String>("label")
                    let isOn = StrataQueries.TableColumn<Preference, Bool>("isOn")
                    let isOff = StrataQueries.TableColumn<Preference, Bool>("isOff")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().count, TableColumns().offset, TableColumns().ratio, TableColumns().delta, TableColumns().label, TableColumns().isOn, TableColumns().isOff]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "preferences"
                static let columnNames: [String] = ["count", "offset", "ratio", "delta", "label", "isOn", "isOff"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 7
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.count = try decoder.decode(Int.self)
                    self.offset = try decoder.decode(Int.self)
                    self.ratio = try decoder.decode(Double.self)
                    self.delta = try decoder.decode(Double.self)
                    self.label = try decoder.decode(String.self)
                    self.isOn = try decoder.decode(Bool.self)
                    self.isOff = try decoder.decode(Bool.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.count)
                    columns.append(self.offset)
                    columns.append(self.ratio)
                    columns.append(self.delta)
                    columns.append(self.label)
                    columns.append(self.isOn)
                    columns.append(self.isOff)
                }
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
        } expansion: {
            """
            struct Node: Identifiable {
                var id: Int
                var parentID: Self.ID?
                var `default`: Bool
                var width, height: Double
                var label: String {
                    didSet { print(label) }
                }
                lazy var cache: [Int] = []
            }

            extension Node: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Node
                    typealias PrimaryKey = Int
                    let id = StrataQueries.TableColumn<Node, Int>("id")
                    let parentID = StrataQueries.TableColumn<Node, Node.ID?>("parentID")
                    let `default` = StrataQueries.TableColumn<Node, Bool>("default")
                    let width = StrataQueries.TableColumn<Node, Double>("width")
                    let height = StrataQueries.TableColumn<Node, Double>("height")
                    let label = StrataQueries.TableColumn<Node, String>("label")
                    var primaryKey: StrataQueries.TableColumn<Node, Int> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().parentID, TableColumns().`default`, TableColumns().width, TableColumns().height, TableColumns().label]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Node
                    var id: Int?
                    var parentID: Node.ID?
                    var `default`: Bool
                    var width: Double
                    var height: Double
                    var label: String
                    init(id: Int? = nil, parentID: Node.ID? = nil, `default`: Bool, width: Double, height: Double, label: String) {
                        self.id = id
                        self.parentID = parentID
                        self.`default` = `default`
                        self.width = width
                        self.height = height
                        self.label = label
                    }
                    init(_ record: Node) {
                        self.id = record.id
                        self.parentID = record.parentID
                        self.`default` = record.`default`
                        self.width = record.width
                        self.height = record.height
                        self.label = record.label
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                        columns.append(self.parentID)
                        columns.append(self.`default`)
                        columns.append(self.width)
                        columns.append(self.height)
                        columns.append(self.label)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "nodes"
                static let columnNames: [String] = ["id", "parentID", "default", "width", "height", "label"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 6
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                    self.parentID = try decoder.decode(Node.ID?.self)
                    self.`default` = try decoder.decode(Bool.self)
                    self.width = try decoder.decode(Double.self)
                    self.height = try decoder.decode(Double.self)
                    self.label = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(self.parentID)
                    columns.append(self.`default`)
                    columns.append(self.width)
                    columns.append(self.height)
                    columns.append(self.label)
                }
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
        } expansion: {
            """
            struct Line: Identifiable {
                let id: Int
                var text: String
                let textLength: Int
                let isEmpty: Bool
            }

            extension Line: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Line
                    typealias PrimaryKey = Int
                    let id = StrataQueries.TableColumn<Line, Int>("id")
                    let text = StrataQueries.TableColumn<Line, String>("text")
                    let textLength = StrataQueries.TableColumn<Line, Int>("text_length")
                    let isEmpty = StrataQueries.TableColumn<Line, Bool>("isEmpty")
                    var primaryKey: StrataQueries.TableColumn<Line, Int> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id, TableColumns().text, TableColumns().textLength, TableColumns().isEmpty]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Line
                    var id: Int?
                    var text: String
                    init(id: Int? = nil, text: String) {
                        self.id = id
                        self.text = text
                    }
                    init(_ record: Line) {
                        self.id = record.id
                        self.text = record.text
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                        columns.append(self.text)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "lines"
                static let columnNames: [String] = ["id", "text"]
                static let generatedColumnNames: [String] = ["text_length", "isEmpty"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 4
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                    self.text = try decoder.decode(String.self)
                    self.textLength = try decoder.decode(Int.self)
                    self.isEmpty = try decoder.decode(Bool.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                    columns.append(self.text)
                }
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
        } expansion: {
            """
            struct Item {
                @StrataQueries.Column("item_id", primaryKey: true) var itemID: Int
                @StrataQueries.Ephemeral var isExpanded = false
            }

            extension Item: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Item
                    typealias PrimaryKey = Int
                    let itemID = StrataQueries.TableColumn<Item, Int>("item_id")
                    var primaryKey: StrataQueries.TableColumn<Item, Int> {
                        self.itemID
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().itemID]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Item
                    var itemID: Int?
                    init(itemID: Int? = nil) {
                        self.itemID = itemID
                    }
                    init(_ record: Item) {
                        self.itemID = record.itemID
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.itemID)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "items"
                static let columnNames: [String] = ["item_id"]
                static let primaryKeyColumnNames: [String] = ["item_id"]
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.itemID = try decoder.decode(Int.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.itemID)
                }
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
        } expansion: {
            """
            struct Odd {
                var value: Int
            }

            extension Odd: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Odd
                    let value = StrataQueries.TableColumn<Odd, Int>(#"a "quoted" column"#)
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().value]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = #"odd "name""#
                static let columnNames: [String] = [#"a "quoted" column"#]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.value = try decoder.decode(Int.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.value)
                }
            }
            """
        }
    }

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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
        assertMacro(["Table": MacroSpec(type: TableMacro.self, conformances: ["StrataQueries.Table", "StrataQueries.PrimaryKeyedTable", "Sendable"])]) {
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
        } diagnostics: {
            """
            @Table class Player {
            ┬─────
            ╰─ 🛑 '@Table' can only be applied to a struct; 'Player' is a class: declare it with 'struct' instead
               ✏️ Replace 'class' with 'struct'
                var id: Int
            }
            """
        } fixes: {
            """
            @Table struct Player {
                var id: Int
            }
            """
        } expansion: {
            """
            struct Player {
                var id: Int
            }

            extension Player: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Player
                    typealias PrimaryKey = Int
                    let id = StrataQueries.TableColumn<Player, Int>("id")
                    var primaryKey: StrataQueries.TableColumn<Player, Int> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Player
                    var id: Int?
                    init(id: Int? = nil) {
                        self.id = id
                    }
                    init(_ record: Player) {
                        self.id = record.id
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["id"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                }
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
        } diagnostics: {
            """
            @Table actor Player {
            ┬─────
            ╰─ 🛑 '@Table' can only be applied to a struct; 'Player' is an actor: declare it with 'struct' instead
               ✏️ Replace 'actor' with 'struct'
                var id: Int
            }
            """
        } fixes: {
            """
            @Table struct Player {
                var id: Int
            }
            """
        } expansion: {
            """
            struct Player {
                var id: Int
            }

            extension Player: StrataQueries.Table, StrataQueries.PrimaryKeyedTable {
                struct TableColumns: StrataQueries.PrimaryKeyedTableDefinition {
                    typealias QueryValue = Player
                    typealias PrimaryKey = Int
                    let id = StrataQueries.TableColumn<Player, Int>("id")
                    var primaryKey: StrataQueries.TableColumn<Player, Int> {
                        self.id
                    }
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().id]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                struct Draft: StrataQueries.TableDraft {
                    typealias PrimaryTable = Player
                    var id: Int?
                    init(id: Int? = nil) {
                        self.id = id
                    }
                    init(_ record: Player) {
                        self.id = record.id
                    }
                    func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                        columns.append(self.id)
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["id"]
                static let primaryKeyColumnNames: [String] = ["id"]
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.id = try decoder.decode(Int.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.id)
                }
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
        } diagnostics: {
            """
            @Table enum Kind {
            ┬─────
            ╰─ 🛑 '@Table' can only be applied to a struct; 'Kind' is an enum: model the rows with a struct (an enum's cases are not columns)
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
        } diagnostics: {
            """
            @Table protocol Named {
            ┬─────
            ╰─ 🛑 '@Table' can only be applied to a struct; 'Named' is a protocol: apply it to each struct that adopts the protocol
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
        } diagnostics: {
            """
            @Table extension Player {
            ┬─────
            ╰─ 🛑 '@Table' can only be applied to a struct; this is an extension of 'Player': apply it to the declaration of the struct instead
            }
            """
        }
    }

    @Test func genericStruct() {
        assertMacro {
            """
            @Table struct Box<Value> {
                var value: Value
            }
            """
        } diagnostics: {
            """
            @Table struct Box<Value> {
                             ┬──────
                             ╰─ 🛑 '@Table' cannot be applied to the generic struct 'Box', since a table's columns are static stored properties; declare a non-generic struct for each table
                var value: Value
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
        } diagnostics: {
            """
            @Table("") struct Player {
                   ┬─
                   ╰─ 🛑 the table name is empty; remove the argument to use the default name 'players', or pass a non-empty name
                      ✏️ Use 'players'
                var name: String
            }
            """
        } fixes: {
            """
            @Table("players") struct Player {
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
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

    // MARK: - Diagnostics: primary keys

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
        } diagnostics: {
            """
            @Table struct Player {
                var name: String
                @Ephemeral var isSelected: Bool
                               ┬─────────
                               ╰─ 🛑 '@Ephemeral' property 'isSelected' needs a default value, which every decoded row gets; add one: '@Ephemeral var isSelected: <Type> = <value>'
                @Ephemeral let note: String?
                               ┬───
                               ╰─ 🛑 '@Ephemeral' property 'note' needs a default value, which every decoded row gets; add one: '@Ephemeral var note: <Type> = <value>'
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
        } diagnostics: {
            """
            @Table struct Player {
                let kind = "player"
                         ┬─────────
                         ╰─ 🛑 'let' property 'kind' has an initial value, so it cannot be decoded from a row; make it 'var', or mark it '@Ephemeral' if it is not a column
                            ✏️ Replace 'let' with 'var'
                            ✏️ Mark 'kind' '@Ephemeral'
                var name: String
            }
            """
        } fixes: {
            """
            @Table struct Player {
                var kind = "player"
                var name: String
            }
            """
        } expansion: {
            """
            struct Player {
                var kind = "player"
                var name: String
            }

            extension Player: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Player
                    let kind = StrataQueries.TableColumn<Player, String>("kind")
                    let name = StrataQueries.TableColumn<Player, String>("name")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().kind, TableColumns().name]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["kind", "name"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 2
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.kind = try decoder.decode(String.self)
                    self.name = try decoder.decode(String.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.kind)
                    columns.append(self.name)
                }
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
        } diagnostics: {
            """
            @Table struct Player {
                @Column("n") @Ephemeral var name = ""
                             ┬─────────
                             ╰─ 🛑 property 'name' cannot be both '@Column' and '@Ephemeral'; remove '@Ephemeral' if it is a column, or '@Column' if it is not
                                ✏️ Remove '@Ephemeral'
                                ✏️ Remove '@Column'
            }
            """
        } fixes: {
            """
            @Table struct Player {
                @Column("n") var name = ""
            }
            """
        } expansion: {
            """
            struct Player {
                var name = ""
            }

            extension Player: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Player
                    let name = StrataQueries.TableColumn<Player, String>("n")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().name]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["n"]
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

    @Test func emptyColumnName() {
        assertMacro {
            """
            @Table struct Player {
                @Column("") var name: String
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                @Column("") var name: String
                        ┬─
                        ╰─ 🛑 the column name of 'name' is empty; remove the argument to use the property name 'name', or pass a non-empty name
                           ✏️ Use the property name 'name'
            }
            """
        } fixes: {
            """
            @Table struct Player {
                @Column("name") var name: String
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
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
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

    @Test func malformedColumnArguments() {
        assertMacro {
            """
            @Table struct Player {
                @Column(Names.name) var name: String
                @Column(as: Date.UnixTimeRepresentation) var date: Date
                @Column(primaryKey: isKey) var id: Int
            }
            """
        } diagnostics: {
            """
            @Table struct Player {
                @Column(Names.name) var name: String
                        ┬─────────
                        ╰─ 🛑 the column name of 'name' must be a string literal, such as '@Column("name")'
                @Column(as: Date.UnixTimeRepresentation) var date: Date
                            ┬──────────────────────────
                            ╰─ 🛑 'as:' of 'date' must name a type with '.self', such as '@Column(as: Date.UnixTimeRepresentation.self)'
                @Column(primaryKey: isKey) var id: Int
                                    ┬────
                                    ╰─ 🛑 'primaryKey:' of 'id' must be 'true' or 'false'
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
        } diagnostics: {
            """
            @Table struct Player {
                var name: String
                @Column("name") var displayName: String
                                    ┬──────────
                                    ╰─ 🛑 properties 'name' and 'displayName' both map to column 'name'; give one of them another name with '@Column("…")'
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
        } diagnostics: {
            """
            @Table struct Player {
                var score: Int
                @Column("double") var doubled: Int { score * 2 }
                ┬────────────────
                ╰─ 🛑 '@Column' cannot be applied to computed property 'doubled'; only stored instance properties are columns: remove '@Column'
                   ✏️ Remove '@Column'
                @Column static var count = 0
                ┬──────
                ╰─ 🛑 '@Column' cannot be applied to static property 'count'; only stored instance properties are columns: remove '@Column'
                   ✏️ Remove '@Column'
                @Ephemeral var tripled: Int { score * 3 }
                ┬─────────
                ╰─ ⚠️ '@Ephemeral' has no effect on computed property 'tripled', which is never a column; remove it
                   ✏️ Remove '@Ephemeral'
            }
            """
        } fixes: {
            """
            @Table struct Player {
                var score: Int
                var doubled: Int { score * 2 }
                static var count = 0
                var tripled: Int { score * 3 }
            }
            """
        } expansion: {
            """
            struct Player {
                var score: Int
                var doubled: Int { score * 2 }
                static var count = 0
                var tripled: Int { score * 3 }
            }

            extension Player: StrataQueries.Table {
                struct TableColumns: StrataQueries.TableDefinition {
                    typealias QueryValue = Player
                    let score = StrataQueries.TableColumn<Player, Int>("score")
                    static let allColumns: [any StrataQueries.TableColumnExpression] = [TableColumns().score]
                    private static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
                    var queryFragment: StrataQueries.QueryFragment {
                        Self.selectionFragment
                    }
                    init() {
                    }
                }
                static let columns = TableColumns()
                static let tableName = "players"
                static let columnNames: [String] = ["score"]
                static let primaryKeyColumnNames: [String] = []
                static let columnCount = 1
                init(decoder: inout StrataQueries.QueryDecoder) throws {
                    self.score = try decoder.decode(Int.self)
                }
                func encodeColumns(to columns: inout StrataSQLite.ColumnEncoder) throws {
                    columns.append(self.score)
                }
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
        } diagnostics: {
            """
            @Table struct Player {
                @Column("x") var a, b: Int
                ┬───────────
                ├─ 🛑 peer macro can only be applied to a single variable
                ├─ 🛑 '@Column' with a name or a primary key applies to a single property; declare each property separately
                ╰─ 🛑 '@Column' with a name or a primary key applies to a single property; declare each property separately
            }
            """
        }
    }
}
