import StrataSQLite

/// What a UUID key migration will do, read from the schema and checked before anything
/// changes: the tables whose keys become UUIDs, the foreign key columns that follow them, and
/// every table that must be rebuilt.
struct UUIDKeyMigrationPlan {
    struct Column {
        var name: String
        var declaredType: String
        var isNotNull: Bool
        var primaryKeyIndex: Int
        /// `pragma_table_xinfo`'s `hidden`: 0 normal, 2 and 3 generated.
        var hidden: Int
    }

    struct ForeignKey {
        var id: Int
        var parentTable: String
        var columns: [String]
        var parentColumns: [String?]
    }

    struct Table {
        var name: String
        var sql: String
        var isWithoutRowID: Bool
        var columns: [Column]
        var foreignKeys: [ForeignKey]

        var primaryKey: [Column] {
            columns.filter { $0.primaryKeyIndex > 0 }.sorted { $0.primaryKeyIndex < $1.primaryKeyIndex }
        }

        /// A name that reads the rowid here (`rowid`, `_rowid_` or `oid`, whichever no column
        /// shadows); nil for a `WITHOUT ROWID` table or one whose columns take all three.
        var rowIDName: String? {
            guard !isWithoutRowID else { return nil }
            let names = Set(columns.map { $0.name.sqliteFolded })
            return ["rowid", "_rowid_", "oid"].first { !names.contains($0) }
        }
    }

    /// A foreign key column that follows a migrated table's key to its new UUID.
    struct FollowingColumn: Hashable {
        var table: String
        var column: String
        var parentTable: String
    }

    /// The migrated tables, in the order given, with their primary key column.
    var migrated: [(table: Table, key: String)]
    /// The columns that follow a migrated key.
    var following: [FollowingColumn]
    /// Every table rebuilt: the migrated ones, those with following columns, and (so that no
    /// table keeps a reference to a dropped one while foreign keys may be enforced) every table
    /// referencing a rebuilt one. Children first: the order they are dropped in.
    var rebuilt: [Table]

    /// Reads the main schema and checks that `names` can be migrated.
    static func read(tables names: [String], in db: Database) throws -> UUIDKeyMigrationPlan {
        let all = try readTables(in: db)
        let byName = Dictionary(all.map { ($0.name.sqliteFolded, $0) }, uniquingKeysWith: { first, _ in first })
        let kinds = try db.fetchAll(sql: "SELECT name, type FROM pragma_table_list WHERE schema = 'main'") { row in
            (try row[0] as String, try row[1] as String)
        }
        let kindByName = Dictionary(kinds.map { ($0.0.sqliteFolded, $0.1) }, uniquingKeysWith: { first, _ in first })

        var migrated: [(table: Table, key: String)] = []
        var seen: Set<String> = []
        for name in names {
            let folded = name.sqliteFolded
            guard seen.insert(folded).inserted else { throw UUIDKeyMigrationError.tableListedTwice(name) }
            if folded.hasPrefix(Database.reservedNamePrefix) { throw UUIDKeyMigrationError.reservedTableName(name) }
            guard let table = byName[folded] else {
                if kindByName[folded] != nil { throw UUIDKeyMigrationError.notAnOrdinaryTable(name) }
                throw UUIDKeyMigrationError.tableNotFound(name)
            }
            if table.isWithoutRowID { throw UUIDKeyMigrationError.withoutRowID(table.name) }
            let key = table.primaryKey
            guard key.count == 1, let column = key.first else {
                throw UUIDKeyMigrationError.primaryKeyNotSingleColumn(table: table.name, columns: key.map(\.name))
            }
            let type = column.declaredType.uppercased()
            if !type.contains("INT") && (type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT")) {
                throw UUIDKeyMigrationError.primaryKeyAlreadyText(table: table.name, column: column.name)
            }
            guard type.contains("INT") else {
                throw UUIDKeyMigrationError.primaryKeyNotInteger(table: table.name, column: column.name, declaredType: column.declaredType)
            }
            if table.rowIDName == nil {
                throw UUIDKeyMigrationError.unsupportedSchema(
                    table: table.name, reason: "its columns named rowid, _rowid_ and oid leave no way to read its rows' ids")
            }
            migrated.append((table, column.name))
        }
        let keyByTable = Dictionary(uniqueKeysWithValues: migrated.map { ($0.table.name.sqliteFolded, $0.key) })

        // Every foreign key to a migrated table, in any table of the schema.
        var following: [FollowingColumn] = []
        for table in all {
            for foreignKey in table.foreignKeys {
                guard let parentKey = keyByTable[foreignKey.parentTable.sqliteFolded],
                    let parent = byName[foreignKey.parentTable.sqliteFolded]
                else { continue }
                guard foreignKey.columns.count == 1, let column = foreignKey.columns.first else {
                    throw UUIDKeyMigrationError.compositeForeignKey(
                        table: table.name, columns: foreignKey.columns, parentTable: parent.name)
                }
                if let parentColumn = foreignKey.parentColumns.first ?? nil, parentColumn.sqliteFolded != parentKey.sqliteFolded {
                    throw UUIDKeyMigrationError.foreignKeyToNonKeyColumn(
                        table: table.name, column: column, parentTable: parent.name, parentColumn: parentColumn)
                }
                following.append(FollowingColumn(table: table.name, column: column, parentTable: parent.name))
            }
        }
        for (table, key) in migrated {
            for foreignKey in table.foreignKeys where foreignKey.columns.contains(where: { $0.sqliteFolded == key.sqliteFolded }) {
                throw UUIDKeyMigrationError.primaryKeyIsForeignKey(table: table.name, column: key, parentTable: foreignKey.parentTable)
            }
        }

        // The rebuilt set, closed over "references a rebuilt table".
        var rebuiltNames = Set(migrated.map { $0.table.name.sqliteFolded }).union(following.map { $0.table.sqliteFolded })
        var grew = true
        while grew {
            grew = false
            for table in all where !rebuiltNames.contains(table.name.sqliteFolded) {
                if table.foreignKeys.contains(where: { rebuiltNames.contains($0.parentTable.sqliteFolded) }) {
                    rebuiltNames.insert(table.name.sqliteFolded)
                    grew = true
                }
            }
        }
        let rebuilt = childrenFirst(all.filter { rebuiltNames.contains($0.name.sqliteFolded) })
        return UUIDKeyMigrationPlan(migrated: migrated, following: following, rebuilt: rebuilt)
    }

    /// The ordinary tables of the main schema but SQLite's own, in schema order.
    private static func readTables(in db: Database) throws -> [Table] {
        let rows = try db.fetchAll(
            sql: """
                SELECT l.name, l.wr, s.sql FROM pragma_table_list AS l JOIN sqlite_schema AS s ON s.name = l.name AND s.type = 'table'
                WHERE l.schema = 'main' AND l.type = 'table' AND l.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                ORDER BY s.rowid
                """
        ) { row in (name: try row[0] as String, withoutRowID: try row[1] as Bool, sql: try row[2] as String) }
        return try rows.map { row in
            let columns = try db.fetchAll(
                sql: "SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?, 'main') ORDER BY cid",
                arguments: [row.name]
            ) { column in
                Column(
                    name: try column[0], declaredType: try column[1], isNotNull: try column[2], primaryKeyIndex: try column[3],
                    hidden: try column[4])
            }
            let references = try db.fetchAll(
                sql: "SELECT id, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?, 'main') ORDER BY id, seq",
                arguments: [row.name]
            ) { reference in
                (
                    id: try reference[0] as Int, parent: try reference[1] as String, from: try reference[2] as String,
                    to: try reference[3] as String?
                )
            }
            var foreignKeys: [ForeignKey] = []
            for reference in references {
                if foreignKeys.last?.id == reference.id {
                    foreignKeys[foreignKeys.count - 1].columns.append(reference.from)
                    foreignKeys[foreignKeys.count - 1].parentColumns.append(reference.to)
                } else {
                    foreignKeys.append(
                        ForeignKey(
                            id: reference.id, parentTable: reference.parent, columns: [reference.from], parentColumns: [reference.to]))
                }
            }
            return Table(name: row.name, sql: row.sql, isWithoutRowID: row.withoutRowID, columns: columns, foreignKeys: foreignKeys)
        }
    }

    /// `tables` with every table before the tables it references (self-references ignored;
    /// the tables of a cycle in schema order).
    private static func childrenFirst(_ tables: [Table]) -> [Table] {
        var remaining = tables
        var result: [Table] = []
        while !remaining.isEmpty {
            let referenced = Set(
                remaining.flatMap { table in
                    table.foreignKeys.map(\.parentTable.sqliteFolded).filter { $0 != table.name.sqliteFolded }
                })
            let ready = remaining.filter { !referenced.contains($0.name.sqliteFolded) }
            // A cycle: nothing is unreferenced, so take the first and go on.
            let next = ready.isEmpty ? [remaining[0]] : ready
            result += next
            let taken = Set(next.map(\.name))
            remaining.removeAll { taken.contains($0.name) }
        }
        return result
    }
}
