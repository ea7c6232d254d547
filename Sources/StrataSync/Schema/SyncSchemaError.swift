/// A synced table breaks a rule of sync, found when the engine is created. Each case names
/// the table (and column) and says what to change.
public enum SyncSchemaError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No table of that name in the main schema.
    case tableNotFound(String)
    /// Record names are `"<primary key>:<table>"`, split on the last colon.
    case colonInTableName(String)
    /// The primary key must be one column.
    case primaryKeyNotSingleColumn(table: String, columns: [String])
    /// The primary key must hold globally unique text (UUIDs): integer keys collide when two
    /// devices insert offline.
    case primaryKeyNotText(table: String, column: String, declaredType: String)
    /// A UNIQUE constraint other than the primary key: two devices can each insert a row
    /// that is unique locally, and the merge could not keep both.
    case uniqueConstraint(table: String, index: String, columns: [String])
    /// A foreign key over several columns.
    case compositeForeignKey(table: String, parentTable: String)
    /// A table's single foreign key must be `ON DELETE CASCADE`, `SET NULL` or
    /// `SET DEFAULT`: with `RESTRICT` or `NO ACTION`, a parent deleted on another device
    /// could not be deleted here.
    case unsupportedOnDelete(table: String, column: String, action: String)
    /// A foreign key to a table that is not synced.
    case referencesUnsyncedTable(table: String, parentTable: String)
    /// Tables that reference each other in a cycle: no order sends parents before children.
    case foreignKeyCycle([String])
    /// A column name the engine reserves for itself.
    case reservedColumnName(table: String, column: String)
    /// A merge policy (``SyncEngineConfiguration/mergePolicies``) names a table the engine
    /// does not sync.
    case mergePolicyTableNotSynced(table: String, column: String)
    /// A merge policy names a column the table does not have (or a generated one, which is
    /// never sent).
    case mergePolicyColumnNotFound(table: String, column: String)
    /// A merge policy on the primary key or the foreign key: the engine merges those itself.
    case mergePolicyOnKeyColumn(table: String, column: String)
    /// Two merge policies for one column.
    case duplicateMergePolicy(table: String, column: String)
    /// A counter on a column that is not INTEGER: counters add whole numbers (REAL sums
    /// depend on their order, and devices would not converge bit for bit).
    case counterColumnNotInteger(table: String, column: String, declaredType: String)

    /// Names the table and column, and what to change.
    public var description: String {
        switch self {
        case .tableNotFound(let table):
            "synced table \"\(table)\" does not exist in the main schema; migrate before creating the sync engine"
        case .colonInTableName(let table):
            "synced table \"\(table)\" has a ':' in its name; record names are \"<primary key>:<table>\", so rename the table"
        case .primaryKeyNotSingleColumn(let table, let columns):
            "synced table \"\(table)\" must have a single-column primary key (has \(columns.isEmpty ? "none" : columns.joined(separator: ", ")))"
        case .primaryKeyNotText(let table, let column, let type):
            "synced table \"\(table)\": primary key \"\(column)\" is \(type.isEmpty ? "untyped" : type); it must hold globally unique text (a UUID): declare it TEXT, BLOB, UUID or untyped, as integer keys collide between devices"
        case .uniqueConstraint(let table, let index, let columns):
            "synced table \"\(table)\": UNIQUE constraint \"\(index)\" on \(columns.joined(separator: ", ")) cannot be kept across devices; drop it (only the primary key may be unique)"
        case .compositeForeignKey(let table, let parent):
            "synced table \"\(table)\": its foreign key to \"\(parent)\" spans several columns; sync supports single-column foreign keys"
        case .unsupportedOnDelete(let table, let column, let action):
            "synced table \"\(table)\": foreign key \"\(column)\" is ON DELETE \(action); use ON DELETE CASCADE, SET NULL or SET DEFAULT"
        case .referencesUnsyncedTable(let table, let parent):
            "synced table \"\(table)\" references \"\(parent)\", which is not synced; sync it too"
        case .foreignKeyCycle(let tables):
            "synced tables \(tables.map { "\"\($0)\"" }.joined(separator: " → ")) reference each other in a cycle; no order could send parents before children"
        case .reservedColumnName(let table, let column):
            "synced table \"\(table)\": column \"\(column)\" uses a name the sync engine reserves (names starting with \"strata_sync\")"
        case .mergePolicyTableNotSynced(let table, let column):
            "merge policy for \"\(table)\".\"\(column)\": table \"\(table)\" is not synced by this engine"
        case .mergePolicyColumnNotFound(let table, let column):
            "merge policy for \"\(table)\".\"\(column)\": synced table \"\(table)\" has no column \"\(column)\" (generated columns are never sent)"
        case .mergePolicyOnKeyColumn(let table, let column):
            "merge policy for \"\(table)\".\"\(column)\": the primary key and the foreign key merge by the engine's own rules; remove the policy"
        case .duplicateMergePolicy(let table, let column):
            "synced table \"\(table)\": column \"\(column)\" has two merge policies; keep one"
        case .counterColumnNotInteger(let table, let column, let type):
            "synced table \"\(table)\": counter column \"\(column)\" is \(type.isEmpty ? "untyped" : type); a counter must be an INTEGER column (REAL sums depend on their order and would not converge)"
        }
    }
}
