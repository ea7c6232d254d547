import MacroTesting
import StrataMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct TableMacroDeclarationDiagnosticsTests {
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
}
