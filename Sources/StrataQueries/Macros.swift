import StrataSQLite

/// Makes a struct a ``Table``: its name, columns in declaration order, by-index decoding and
/// binding, typed `TableColumns`, and a `Draft` for inserting without a primary key.
///
/// ```swift
/// @Table struct RemindersList: Identifiable {    // table "remindersLists"
///     let id: Int
///     var title = ""
///     @Column(as: Date.UnixTimeRepresentation.self) var updatedAt: Date
///     @Ephemeral var isSelected = false
/// }
/// ```
///
/// The table name defaults to the camel-cased plural of the type name; pass one to override:
/// `@Table("lists")`. A property named `id`, or one marked `@Column(primaryKey: true)`, is the
/// primary key; a table with one also conforms to ``PrimaryKeyedTable``.
@attached(
    extension,
    conformances: Table, PrimaryKeyedTable, Sendable,
    names: named(TableColumns), named(Draft), named(columns), named(tableName), named(columnNames),
    named(generatedColumnNames), named(primaryKeyColumnNames), named(columnCount), named(init(decoder:)),
    named(encodeColumns(to:))
)
public macro Table(_ name: String? = nil) = #externalMacro(module: "StrataMacros", type: "TableMacro")

/// Customizes how a property of a `@Table` or `@Selection` maps to its column.
///
/// - Parameters:
///   - name: The column's name, when it differs from the property's.
///   - representation: The stored form of the value (``QueryRepresentable``), for example
///     `Date.UnixTimeRepresentation.self` or `JSONRepresentation<[String]>.self`.
///   - primaryKey: Whether the column is the table's primary key (default: the `id` property).
@attached(peer)
public macro Column(
    _ name: String? = nil,
    as representation: Any.Type? = nil,
    primaryKey: Bool? = nil
) = #externalMacro(module: "StrataMacros", type: "ColumnMacro")

/// A generated column (`GENERATED ALWAYS AS …`): read by every select, never written.
@attached(peer)
public macro Column(
    _ name: String? = nil,
    as representation: Any.Type? = nil,
    generated: GeneratedColumnStorage
) = #externalMacro(module: "StrataMacros", type: "ColumnMacro")

/// How SQLite keeps a generated column: computed when read, or stored in the row.
public enum GeneratedColumnStorage: Sendable {
    case virtual
    case stored
}

/// Marks a property of a `@Table` or `@Selection` that is not a column. It needs a default
/// value, which every decoded row gets.
@attached(peer)
public macro Ephemeral() = #externalMacro(module: "StrataMacros", type: "EphemeralMacro")

/// Makes a struct a custom result row: `Columns(...)` takes one expression per property and
/// the struct decodes from them by index.
///
/// ```swift
/// @Selection struct Row {
///     let game: Game
///     let playerCount: Int
/// }
/// Game.group(by: \.id)
///     .leftJoin(Player.all) { $0.id.eq($1.gameID) }
///     .select { Row.Columns(game: $0, playerCount: $1.count()) }
/// ```
@attached(
    extension,
    conformances: QueryDecodable, FetchableRecord, Sendable,
    names: named(Columns), named(columnCount), named(init(decoder:))
)
public macro Selection() = #externalMacro(module: "StrataMacros", type: "SelectionMacro")

/// Makes a Swift function callable from SQL: generates `$name`, which builds a call in a query
/// (`$isWinner(score: $0.score)`) and installs with `db.add(function: $isWinner)`. The function
/// stays callable from Swift.
///
/// - Parameters:
///   - name: The SQL name (default: the Swift name).
///   - representation: A function type giving the stored form of each argument and of the
///     result, for example `((UUID.BytesRepresentation) -> Bool).self`.
///   - isDeterministic: Whether the function always returns the same result for the same
///     arguments (lets SQLite use it in indexes and generated columns).
@attached(peer, names: prefixed(`$`), prefixed(__DatabaseFunction_))
public macro DatabaseFunction(
    _ name: String? = nil,
    as representation: Any.Type? = nil,
    isDeterministic: Bool = false
) = #externalMacro(module: "StrataMacros", type: "DatabaseFunctionMacro")

/// A raw SQL expression that mixes typed columns and bound values, for what the builder
/// cannot say. Interpolated expressions are spliced as SQL; interpolated values are bound.
///
/// ```swift
/// Player.where { #sql("\($0.name) COLLATE NOCASE = \(name)") }
/// Player.select { #sql("julianday('now') - julianday(\($0.joinedAt))", as: Double.self) }
/// ```
///
/// The literal is checked at compile time: unbalanced quotes or parentheses and raw `?`
/// placeholders are errors.
/// A raw SQL statement, as SQLiteData's users write their migrations:
///
/// ```swift
/// try #sql("CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)").execute(db)
/// ```
///
/// Checked at compile time like the typed form; `execute(_:)` runs it.
@freestanding(expression)
public macro sql(_ queryFragment: QueryFragment) -> SQLQueryExpression<()> =
    #externalMacro(module: "StrataMacros", type: "SQLMacro")

@freestanding(expression)
public macro sql<QueryValue>(
    _ queryFragment: QueryFragment,
    as queryValueType: QueryValue.Type = QueryValue.self
) -> SQLQueryExpression<QueryValue> = #externalMacro(module: "StrataMacros", type: "SQLMacro")
