import StrataSQLite

/// The synced tables, validated against the rules of sync and ordered parents first.
public struct SyncSchema: Sendable, Hashable {
    /// The tables, each after every table it references: the order saves go in (deletes go in
    /// reverse).
    public var tables: [SyncedTable]

    /// Reads and validates the named tables.
    ///
    /// - Throws: the first ``SyncSchemaError`` found, naming the table and column.
    public static func read(tables names: [String], in db: Database) throws -> SyncSchema {
        var tables: [String: SyncedTable] = [:]
        for name in names {
            if name.contains(":") { throw SyncSchemaError.colonInTableName(name) }
            let table = try SyncedTable.read(name, in: db)
            try validate(table, in: db)
            tables[name] = table
        }
        for table in tables.values.sorted(by: { $0.name < $1.name }) {
            for parent in table.referencedTables where tables[parent] == nil {
                throw SyncSchemaError.referencesUnsyncedTable(table: table.name, parentTable: parent)
            }
        }
        return SyncSchema(tables: try parentsFirst(tables, order: names))
    }

    /// The table named `name`, if synced.
    public func table(named name: String) -> SyncedTable? {
        tables.first { $0.name == name }
    }

    private static func validate(_ table: SyncedTable, in db: Database) throws {
        for column in table.columns + table.generatedColumns.map({ .init(name: $0, declaredType: "", isNotNull: false, hasDefault: false) })
        where column.name.lowercased().hasPrefix("strata_sync") {
            throw SyncSchemaError.reservedColumnName(table: table.name, column: column.name)
        }
        if let key = table.columns.first(where: { $0.name == table.primaryKey }), !canHoldTextKeys(key.declaredType) {
            throw SyncSchemaError.primaryKeyNotText(table: table.name, column: key.name, declaredType: key.declaredType)
        }
        let uniqueIndexes = try db.fetchAll(
            sql: "SELECT name FROM pragma_index_list(?) WHERE \"unique\" = 1 AND origin <> 'pk' ORDER BY name",
            arguments: [table.name]
        ) { row in try row[0] as String }
        if let index = uniqueIndexes.first {
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [index])
            throw SyncSchemaError.uniqueConstraint(table: table.name, index: index, columns: columns)
        }
        if let parent = table.parent, !["CASCADE", "SET NULL", "SET DEFAULT"].contains(parent.onDelete) {
            throw SyncSchemaError.unsupportedOnDelete(table: table.name, column: parent.column, action: parent.onDelete)
        }
    }

    /// Whether a key column of this declared type keeps a UUID's text as text: SQLite's TEXT,
    /// BLOB (an untyped column) and NUMERIC affinities do (a UUID never reads as a number),
    /// which covers `id TEXT`, `id BLOB`, `id` and `id UUID`. INTEGER affinity is refused (an
    /// `INTEGER PRIMARY KEY` is the rowid, numbered per device), and so is REAL. Values that
    /// are not text are refused when written (``CaptureTriggers``).
    static func canHoldTextKeys(_ declaredType: String) -> Bool {
        switch ColumnAffinity(declaredType: declaredType) {
        case .text, .blob, .numeric: true
        case .integer, .real: false
        }
    }

    /// A topological order of the tables (parents first), keeping the given order where the
    /// references allow it; a cycle throws.
    private static func parentsFirst(_ tables: [String: SyncedTable], order: [String]) throws -> [SyncedTable] {
        var result: [SyncedTable] = []
        var done: Set<String> = []
        var visiting: [String] = []
        func visit(_ name: String) throws {
            if done.contains(name) { return }
            if let start = visiting.firstIndex(of: name) {
                throw SyncSchemaError.foreignKeyCycle(Array(visiting[start...]) + [name])
            }
            guard let table = tables[name] else { return }
            visiting.append(name)
            for parent in table.referencedTables { try visit(parent) }
            visiting.removeLast()
            done.insert(name)
            result.append(table)
        }
        for name in order { try visit(name) }
        return result
    }
}
