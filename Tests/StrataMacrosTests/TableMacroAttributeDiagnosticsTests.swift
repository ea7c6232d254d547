import MacroTesting
import StrataMacros
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacroExpansion
import Testing

@Suite(.timeLimit(.minutes(5)), .macros(tableMacroSpecs, record: .never))
struct TableMacroAttributeDiagnosticsTests {
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
                    static let selectionFragment = StrataQueries.QueryFragment(verbatim: allColumns.map(\\.queryFragment.sql).joined(separator: ", "))
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
