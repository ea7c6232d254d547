import MacroTesting
import StrataMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct TableMacroColumnExpansionTests {
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
}
