/// `Database.migrateIntegerPrimaryKeysToUUIDs(tables:uuid:)` refused a schema,
/// or found a row it could not carry over. Each case names the table (and column or row) at
/// fault; nothing was changed when it is thrown.
public enum UUIDKeyMigrationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No table of that name in the main schema.
    case tableNotFound(String)
    /// The name is that of a view or a virtual table, which have no primary key to convert.
    case notAnOrdinaryTable(String)
    /// A table the library owns (its name starts with `strata_`).
    case reservedTableName(String)
    /// The same table (names compare case-insensitively) appears twice in the list.
    case tableListedTwice(String)
    /// A `WITHOUT ROWID` table: its rows have no identity apart from the key being replaced.
    case withoutRowID(String)
    /// The primary key has no column, or several.
    case primaryKeyNotSingleColumn(table: String, columns: [String])
    /// The primary key is not an integer (its declared type has no `INT`).
    case primaryKeyNotInteger(table: String, column: String, declaredType: String)
    /// The primary key is already text: the table was migrated before (or never needed it).
    /// Running the migration again would give every row a second new id and break the ids
    /// other devices or files already hold, so it is refused rather than skipped.
    case primaryKeyAlreadyText(table: String, column: String)
    /// The primary key is also a foreign key: its new value would have to be both a fresh
    /// UUID and the parent's.
    case primaryKeyIsForeignKey(table: String, column: String, parentTable: String)
    /// A foreign key over several columns references a table being migrated.
    case compositeForeignKey(table: String, columns: [String], parentTable: String)
    /// A foreign key references a column of a migrated table other than its primary key.
    case foreignKeyToNonKeyColumn(table: String, column: String, parentTable: String, parentColumn: String)
    /// The UUID generator returned the same UUID twice.
    case duplicateUUID(table: String, uuid: String)
    /// After the rebuild, a row references a parent row that does not exist (it already did
    /// before: the migration carries every reference over, so this is a dangling reference the
    /// database held while foreign keys were not enforced).
    case foreignKeyViolation(table: String, rowID: Int64?, column: String, parentTable: String)
    /// The table's `CREATE TABLE` statement could not be rewritten (an unexpected form), or
    /// the rebuilt table did not come out with the same columns.
    case unsupportedSchema(table: String, reason: String)

    /// Names the table (and column or row), and what to change.
    public var description: String {
        switch self {
        case .tableNotFound(let table):
            "cannot migrate \"\(table)\" to UUID keys: no such table in the main schema"
        case .notAnOrdinaryTable(let table):
            "cannot migrate \"\(table)\" to UUID keys: it is a view or a virtual table"
        case .reservedTableName(let table):
            "cannot migrate \"\(table)\" to UUID keys: tables whose name starts with \"strata_\" belong to the library"
        case .tableListedTwice(let table):
            "table \"\(table)\" is listed twice for the UUID key migration"
        case .withoutRowID(let table):
            "cannot migrate \"\(table)\" to UUID keys: it is a WITHOUT ROWID table"
        case .primaryKeyNotSingleColumn(let table, let columns):
            "cannot migrate \"\(table)\" to UUID keys: its primary key must be a single column (has \(columns.isEmpty ? "none" : columns.joined(separator: ", ")))"
        case .primaryKeyNotInteger(let table, let column, let type):
            "cannot migrate \"\(table)\" to UUID keys: primary key \"\(column)\" is \(type.isEmpty ? "untyped" : type), not an integer"
        case .primaryKeyAlreadyText(let table, let column):
            "table \"\(table)\": primary key \"\(column)\" is already TEXT; it was migrated before, so it is not migrated again"
        case .primaryKeyIsForeignKey(let table, let column, let parent):
            "cannot migrate \"\(table)\" to UUID keys: primary key \"\(column)\" is also a foreign key to \"\(parent)\""
        case .compositeForeignKey(let table, let columns, let parent):
            "table \"\(table)\": foreign key (\(columns.joined(separator: ", "))) to \"\(parent)\" spans several columns; only single-column foreign keys can follow a key to UUIDs"
        case .foreignKeyToNonKeyColumn(let table, let column, let parent, let parentColumn):
            "table \"\(table)\": foreign key \"\(column)\" references \"\(parent)\".\"\(parentColumn)\", which is not its primary key; only references to the primary key can follow it to UUIDs"
        case .duplicateUUID(let table, let uuid):
            "the UUID generator returned \(uuid) twice (table \"\(table)\")"
        case .foreignKeyViolation(let table, let rowID, let column, let parent):
            "table \"\(table)\": row \(rowID.map(String.init) ?? "(without rowid)") has a foreign key \"\(column)\" to a missing row of \"\(parent)\"; fix the dangling reference before migrating"
        case .unsupportedSchema(let table, let reason):
            "cannot migrate \"\(table)\" to UUID keys: \(reason)"
        }
    }
}
