import StrataAssets
import StrataSQLite

/// What the sync engine knows of one synced table, read from SQLite's own schema (so it
/// describes the table as migrated, not as some Swift type claims).
public struct SyncedTable: Sendable, Hashable {
    /// A column that syncs: every column but generated ones.
    public struct Column: Sendable, Hashable {
        /// The name.
        public var name: String
        /// The declared type, as written (`TEXT`, `INTEGER`, `BLOB`…; may be empty).
        public var declaredType: String
        /// Whether the column is declared NOT NULL.
        public var isNotNull: Bool
        /// Whether the column has a DEFAULT.
        public var hasDefault: Bool
    }

    /// The table's single foreign key, which makes its rows children of the parent's rows.
    public struct ParentReference: Sendable, Hashable {
        /// The foreign key column of the child table.
        public var column: String
        /// The referenced table.
        public var parentTable: String
        /// The referenced column (empty when it is the primary key by default).
        public var parentColumn: String
        /// The `ON DELETE` action as SQLite reports it (`CASCADE`, `SET NULL`…).
        public var onDelete: String
    }

    /// The name.
    public var name: String { didSet { sql = Self.statements(name, primaryKey, columns, parent) } }
    /// The single primary key column (text, globally unique).
    public var primaryKey: String { didSet { sql = Self.statements(name, primaryKey, columns, parent) } }
    /// The synced columns in declaration order, the primary key included.
    public var columns: [Column] { didSet { sql = Self.statements(name, primaryKey, columns, parent) } }
    /// Generated columns: computed locally on every device, never sent.
    public var generatedColumns: [String]
    /// Set when the table has exactly one foreign key; join tables with several have none.
    public var parent: ParentReference? { didSet { sql = Self.statements(name, primaryKey, columns, parent) } }
    /// Every foreign key's parent table, for ordering sends and detecting cycles.
    public var referencedTables: [String]
    /// Every single-column foreign key, the parent's included: a row of a join table (which has
    /// no parent) still waits on a receiving device for each row it references.
    public var references: [ParentReference] = []
    /// The columns StrataAssets tracks (`trackAssetColumn`): their values are asset ids, and the
    /// content travels with the record, by hash.
    public var assetColumns: Set<String> = []
    /// The statements the engine runs on the table for each record, kept in step with the
    /// properties they are written from.
    private(set) var sql: TableSQL

    init(
        name: String, primaryKey: String, columns: [Column], generatedColumns: [String], parent: ParentReference?,
        referencedTables: [String]
    ) {
        self.name = name
        self.primaryKey = primaryKey
        self.columns = columns
        self.generatedColumns = generatedColumns
        self.parent = parent
        self.referencedTables = referencedTables
        sql = Self.statements(name, primaryKey, columns, parent)
    }

    private static func statements(_ name: String, _ primaryKey: String, _ columns: [Column], _ parent: ParentReference?) -> TableSQL {
        TableSQL(name: name, primaryKey: primaryKey, columns: columns, parent: parent)
    }

    /// Reads the table's description from `db`.
    ///
    /// - Throws: ``SyncSchemaError/tableNotFound(_:)``, or the schema rule the table breaks
    ///   that can be seen from the table alone (see ``SyncSchemaError``).
    public static func read(_ name: String, in db: Database) throws -> SyncedTable {
        let info = try db.fetchAll(
            sql: "SELECT name, type, \"notnull\", dflt_value IS NOT NULL, pk, hidden FROM pragma_table_xinfo(?)",
            arguments: [name]
        ) { row in
            (
                name: try row[0] as String, type: try row[1] as String, notNull: try row[2] as Bool,
                hasDefault: try row[3] as Bool, pk: try row[4] as Int, hidden: try row[5] as Int
            )
        }
        guard !info.isEmpty else { throw SyncSchemaError.tableNotFound(name) }
        let keys = info.filter { $0.pk > 0 }
        guard keys.count == 1, let key = keys.first else {
            throw SyncSchemaError.primaryKeyNotSingleColumn(table: name, columns: keys.map(\.name))
        }
        // hidden: 2 and 3 are virtual and stored generated columns.
        let generated = info.filter { $0.hidden == 2 || $0.hidden == 3 }.map(\.name)
        let columns = info.filter { $0.hidden == 0 }.map {
            Column(name: $0.name, declaredType: $0.type, isNotNull: $0.notNull, hasDefault: $0.hasDefault)
        }
        let foreignKeys = try db.fetchAll(
            sql: "SELECT id, \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq",
            arguments: [name]
        ) { row in
            (
                id: try row[0] as Int, table: try row[1] as String, from: try row[2] as String,
                to: try row[3] as String?, onDelete: try row[4] as String
            )
        }
        let keyIDs = Set(foreignKeys.map(\.id))
        var parent: ParentReference?
        if keyIDs.count == 1, let only = foreignKeys.first {
            guard foreignKeys.count == 1 else {
                throw SyncSchemaError.compositeForeignKey(table: name, parentTable: only.table)
            }
            parent = ParentReference(
                column: only.from, parentTable: only.table, parentColumn: only.to ?? "", onDelete: only.onDelete.uppercased())
        }
        var table = SyncedTable(
            name: name, primaryKey: key.name, columns: columns, generatedColumns: generated,
            parent: parent, referencedTables: Array(Set(foreignKeys.map(\.table))).sorted())
        table.references = keyIDs.sorted().compactMap { id in
            let parts = foreignKeys.filter { $0.id == id }
            guard parts.count == 1, let only = parts.first else { return nil }
            return ParentReference(
                column: only.from, parentTable: only.table, parentColumn: only.to ?? "", onDelete: only.onDelete.uppercased())
        }
        for column in columns where try db.isTrackedAssetColumn(table: name, column: column.name) {
            table.assetColumns.insert(column.name)
        }
        return table
    }

    /// The names of the synced columns other than the primary key.
    public var valueColumns: [String] { sql.valueColumns }
}
