import Foundation
import StrataSQLite

extension Database {
    /// Moves tables with integer primary keys to the globally unique TEXT keys sync needs:
    /// every row of each listed table gets a new UUID (lowercase text, as Strata stores
    /// `UUID`), and every foreign key column in the schema that references one of them is
    /// rewritten to its parent's new UUID.
    ///
    /// Call it inside a migration, before creating the `SyncEngine`:
    ///
    /// ```swift
    /// migrator.registerMigration("Move to UUID keys for sync") { db in
    ///     try db.migrateIntegerPrimaryKeysToUUIDs(tables: ["lists", "reminders", "tags", "reminderTags"])
    /// }
    /// ```
    ///
    /// Each affected table is rebuilt following SQLite's procedure for altering a table: a copy
    /// is created from the table's own `CREATE TABLE` statement with the key (and the foreign
    /// keys following it) retyped `TEXT`, the key made `NOT NULL` and `AUTOINCREMENT` dropped;
    /// every other column, type, `NOT NULL`, `DEFAULT`, `CHECK`, `COLLATE`, generated column,
    /// `ON DELETE` / `ON UPDATE` action and table option stays as written. The rows are copied,
    /// the old table dropped, the copy renamed, and the table's indexes, the schema's triggers
    /// and views (and the connection's TEMP ones) created again from their own SQL. NULL
    /// foreign keys stay NULL.
    ///
    /// Every row keeps its rowid, so right after the migration (in the same migration, before
    /// a `VACUUM` can renumber rows) `SELECT rowid, id FROM lists` maps each former integer id
    /// to its UUID, for ids the app kept outside the database.
    ///
    /// Everything happens in a savepoint of the current transaction (a transaction of its own
    /// when there is none): when it throws, nothing changed. Foreign keys cannot be switched
    /// off inside a transaction, so when they are enforced (outside ``DatabaseMigrator``, which
    /// turns them off), their checks are deferred, no table ever references a dropped one
    /// while it runs, and `PRAGMA foreign_key_check` runs on every rebuilt table at the end.
    ///
    /// Run it once: the migrator records the migration. A table whose key is already TEXT is
    /// refused with ``UUIDKeyMigrationError/primaryKeyAlreadyText(table:column:)`` rather than
    /// skipped, because migrating it again would replace ids other devices already hold.
    ///
    /// The migration makes keys fit for sync; the schema's other rules (no UNIQUE constraint
    /// besides the key, no foreign key cycles — a table referencing itself included) still
    /// apply when the engine is created.
    ///
    /// - Parameters:
    ///   - tables: the tables whose primary key becomes a UUID (names compare
    ///     case-insensitively, as in SQL).
    ///   - uuid: makes each new key, in the order of the list and of each table's rowids;
    ///     inject a deterministic one in tests.
    /// - Returns: what changed.
    /// - Throws: ``UUIDKeyMigrationError`` naming the table and column or row at fault;
    ///   errors the generator throws; database errors.
    @discardableResult
    public func migrateIntegerPrimaryKeysToUUIDs(
        tables: [String], uuid: () throws -> UUID = { UUID() }
    ) throws -> UUIDKeyMigrationSummary {
        try savepoint {
            let plan = try UUIDKeyMigrationPlan.read(tables: tables, in: self)
            return try UUIDKeyRebuild(plan: plan, db: self).run(uuid: uuid)
        }
    }
}

/// Runs a ``UUIDKeyMigrationPlan``: SQLite's twelve steps for altering tables, for all the
/// plan's tables at once.
private struct UUIDKeyRebuild {
    let plan: UUIDKeyMigrationPlan
    let db: Database

    /// The name of the rebuilt copy of the table at `index` of the plan's rebuilt tables.
    /// Library-prefixed, and numbered rather than derived from the table's name so no name,
    /// however quoted, can collide with it.
    func copyName(_ index: Int) -> String { "strata_keymig_\(index)" }
    func mapName(_ index: Int) -> String { "strata_keymig_map_\(index)" }

    func run(uuid: () throws -> UUID) throws -> UUIDKeyMigrationSummary {
        // With legacy_alter_table on, renaming the copies would not point the references at
        // the copies back to the final names.
        let legacyAlterTable = try Bool.fetchOne(db, sql: "PRAGMA legacy_alter_table") ?? false
        let deferForeignKeys = try Bool.fetchOne(db, sql: "PRAGMA defer_foreign_keys") ?? false
        if legacyAlterTable { try db.execute(sql: "PRAGMA legacy_alter_table = OFF") }
        // Copies are filled and old tables dropped in an order foreign keys may not like
        // halfway (a self-reference, a cycle); the check at the end is what counts.
        if !deferForeignKeys { try db.execute(sql: "PRAGMA defer_foreign_keys = ON") }
        defer {
            if legacyAlterTable { try? db.execute(sql: "PRAGMA legacy_alter_table = ON") }
            if !deferForeignKeys { try? db.execute(sql: "PRAGMA defer_foreign_keys = OFF") }
        }

        // Views and triggers go first and come back last, from their own SQL: renaming a table
        // checks every view and trigger of the schema, and one mentioning a table dropped at
        // that moment would fail it.
        // The connection's TEMP views and triggers too (an app's own, the sync engine's
        // capture triggers): SQLite stores their statements without the TEMP keyword.
        var viewsAndTriggers: [(type: String, name: String, sql: String)] = []
        for schema in ["main", "temp"] {
            viewsAndTriggers += try db.fetchAll(
                sql:
                    "SELECT type, name, sql FROM \(schema).sqlite_schema WHERE type IN ('view', 'trigger') AND sql IS NOT NULL ORDER BY rowid"
            ) { row in
                let sql = try row[2] as String
                let temporary = schema == "temp" && sql.prefix(7).uppercased() == "CREATE "
                return (
                    type: try row[0] as String, name: "\(schema).\((try row[1] as String).quotedIdentifier)",
                    sql: temporary ? "CREATE TEMP " + sql.dropFirst(7) : sql
                )
            }
        }
        for object in viewsAndTriggers {
            try db.execute(sql: "DROP \(object.type == "view" ? "VIEW" : "TRIGGER") \(object.name)")
        }
        var indexes: [String] = []
        var sequences: [(table: String, value: Int64)] = []
        let hasSequences =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM main.sqlite_schema WHERE name = 'sqlite_sequence')") ?? false
        let migratedNames = Set(plan.migrated.map { $0.table.name })
        for table in plan.rebuilt {
            indexes += try String.fetchAll(
                db,
                sql:
                    "SELECT sql FROM main.sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = ? COLLATE NOCASE ORDER BY rowid",
                arguments: [table.name])
            // A migrated table loses AUTOINCREMENT, and its sequence with it.
            if hasSequences, !migratedNames.contains(table.name),
                let value = try Int64.fetchOne(db, sql: "SELECT seq FROM main.sqlite_sequence WHERE name = ?", arguments: [table.name])
            {
                sequences.append((table.name, value))
            }
        }

        var summary = UUIDKeyMigrationSummary(migratedTables: [], foreignKeyColumns: [], rebuiltTables: plan.rebuilt.map(\.name))
        var issued: Set<UUID> = []
        var mapByTable: [String: String] = [:]
        for (index, (table, key)) in plan.migrated.enumerated() {
            let rows = try makeMap(mapName(index), for: table, key: key, uuid: uuid, issued: &issued)
            mapByTable[table.name.sqliteFolded] = mapName(index)
            summary.migratedTables.append(.init(table: table.name, column: key, rows: rows))
        }
        summary.foreignKeyColumns = plan.following.map { .init(table: $0.table, column: $0.column, parentTable: $0.parentTable) }

        let copies = Dictionary(uniqueKeysWithValues: plan.rebuilt.enumerated().map { ($1.name.sqliteFolded, copyName($0)) })
        // Every copy exists before any is filled: a row inserted into a copy is checked
        // against the copies it references. Parents are filled first.
        for (index, table) in plan.rebuilt.enumerated() {
            try createCopy(copyName(index), of: table, renamedReferences: copies)
        }
        // With foreign keys enforced, inserting a parent row (checks are deferred) and deleting
        // one (dropping a table deletes its rows) each search the child tables for rows
        // pointing at it; without an index on the child's column that is a scan per row, and a
        // table referencing itself took minutes for 100,000 rows. Indexes on the foreign key
        // columns make each search a lookup: on the copies while they fill, on the old tables
        // while they are dropped (where they go with their table).
        let enforcesForeignKeys = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
        let fillIndexes =
            enforcesForeignKeys ? try indexForeignKeys(tableNames: plan.rebuilt.indices.map(copyName), prefix: "strata_keymig_fill") : []
        for (index, table) in plan.rebuilt.enumerated().reversed() {
            try fill(copyName(index), from: table, maps: mapByTable)
        }
        for name in fillIndexes { try db.execute(sql: "DROP INDEX main.\(name.quotedIdentifier)") }
        if enforcesForeignKeys { _ = try indexForeignKeys(tableNames: plan.rebuilt.map(\.name), prefix: "strata_keymig_drop") }
        for table in plan.rebuilt {
            try db.execute(sql: "DROP TABLE main.\(table.name.quotedIdentifier)")
        }
        for (index, table) in plan.rebuilt.enumerated() {
            try db.execute(sql: "ALTER TABLE main.\(copyName(index).quotedIdentifier) RENAME TO \(table.name.quotedIdentifier)")
        }
        for sql in indexes { try db.execute(sql: sql) }
        for (table, value) in sequences {
            // Keeps AUTOINCREMENT from handing out again an id deleted before the rebuild.
            try db.execute(sql: "DELETE FROM main.sqlite_sequence WHERE name = ?", arguments: [table])
            try db.execute(sql: "INSERT INTO main.sqlite_sequence (name, seq) VALUES (?, ?)", arguments: [table, value])
        }
        for object in viewsAndTriggers { try db.execute(sql: object.sql) }
        for index in plan.migrated.indices { try db.execute(sql: "DROP TABLE temp.\(mapName(index).quotedIdentifier)") }
        for table in plan.rebuilt { try checkForeignKeys(of: table.name) }
        return summary
    }

    /// Creates an index on every foreign key of `tableNames` that references one of them;
    /// returns the indexes' names.
    private func indexForeignKeys(tableNames: [String], prefix: String) throws -> [String] {
        let folded = Set(tableNames.map(\.sqliteFolded))
        var names: [String] = []
        for (tableIndex, table) in tableNames.enumerated() {
            let references = try db.fetchAll(
                sql: "SELECT id, \"table\", \"from\" FROM pragma_foreign_key_list(?, 'main') ORDER BY id, seq", arguments: [table]
            ) { row in (id: try row[0] as Int, parent: try row[1] as String, column: try row[2] as String) }
            for id in Set(references.map(\.id)).sorted() {
                let columns = references.filter { $0.id == id }
                guard let parent = columns.first?.parent, folded.contains(parent.sqliteFolded) else { continue }
                let name = "\(prefix)_\(tableIndex)_\(id)"
                try db.execute(
                    sql:
                        "CREATE INDEX main.\(name.quotedIdentifier) ON \(table.quotedIdentifier) (\(columns.map(\.column.quotedIdentifier).joined(separator: ", ")))"
                )
                names.append(name)
            }
        }
        return names
    }

    /// Gives each row of `table` a UUID, in rowid order, in a temporary table mapping the
    /// row's rowid and old key to its new key.
    private func makeMap(
        _ map: String, for table: UUIDKeyMigrationPlan.Table, key: String, uuid: () throws -> UUID, issued: inout Set<UUID>
    ) throws -> Int {
        // The old key is declared INTEGER so a lookup compares the way SQLite matches a
        // foreign key to an integer parent key (text '5' finds 5).
        try db.execute(
            sql: """
                CREATE TEMP TABLE \(map.quotedIdentifier) (oldRowID INTEGER PRIMARY KEY, oldKey INTEGER, newKey TEXT NOT NULL UNIQUE);
                CREATE INDEX temp.\((map + "_old").quotedIdentifier) ON \(map.quotedIdentifier) (oldKey);
                """)
        guard let rowID = table.rowIDName else {
            throw UUIDKeyMigrationError.unsupportedSchema(table: table.name, reason: "its rows' ids cannot be read")
        }
        let rows = try db.fetchAll(
            sql: "SELECT \(rowID), \(key.quotedIdentifier) FROM main.\(table.name.quotedIdentifier) ORDER BY \(rowID)"
        ) { row in (try row[0] as Int64, try row[1] as DatabaseValue) }
        let insert = try db.makeStatement(sql: "INSERT INTO temp.\(map.quotedIdentifier) (oldRowID, oldKey, newKey) VALUES (?, ?, ?)")
        for (rowID, oldKey) in rows {
            let newKey = try uuid()
            guard issued.insert(newKey).inserted else {
                throw UUIDKeyMigrationError.duplicateUUID(table: table.name, uuid: newKey.uuidString.lowercased())
            }
            try insert.execute(arguments: [rowID, oldKey, newKey.uuidString.lowercased()])
        }
        return rows.count
    }

    /// Creates the copy from the table's statement and checks it has the same columns.
    private func createCopy(_ copy: String, of table: UUIDKeyMigrationPlan.Table, renamedReferences: [String: String]) throws {
        let folded = table.name.sqliteFolded
        let key = plan.migrated.first { $0.table.name.sqliteFolded == folded }?.key.sqliteFolded
        var retyped = Set(plan.following.filter { $0.table.sqliteFolded == folded }.map { $0.column.sqliteFolded })
        if let key { retyped.insert(key) }
        let rewrite = CreateTableRewrite(
            table: table.name, newName: copy, retypedColumns: retyped, uuidKey: key, renamedReferences: renamedReferences)
        try db.execute(sql: try rewrite.apply(to: table.sql))

        // The rewrite edits tokens, not a parsed tree: the copy's columns are compared with
        // the table's, so a statement it misread fails here, before any data moves.
        let columns = try db.fetchAll(
            sql: "SELECT name, type, \"notnull\", pk, hidden FROM pragma_table_xinfo(?, 'main') ORDER BY cid", arguments: [copy]
        ) { column in
            UUIDKeyMigrationPlan.Column(
                name: try column[0], declaredType: try column[1], isNotNull: try column[2], primaryKeyIndex: try column[3],
                hidden: try column[4])
        }
        func mismatch(_ reason: String) -> UUIDKeyMigrationError { .unsupportedSchema(table: table.name, reason: reason) }
        guard columns.count == table.columns.count else {
            throw mismatch("its rebuilt copy has \(columns.count) columns instead of \(table.columns.count)")
        }
        for (old, new) in zip(table.columns, columns) {
            let name = old.name.sqliteFolded
            let expectedType = retyped.contains(name) ? "TEXT" : old.declaredType
            let expectedNotNull = name == key ? true : old.isNotNull
            guard old.name == new.name, new.declaredType == expectedType, new.isNotNull == expectedNotNull,
                old.primaryKeyIndex == new.primaryKeyIndex, old.hidden == new.hidden
            else {
                throw mismatch("its rebuilt copy's column \"\(new.name)\" does not match column \"\(old.name)\" (\(old.declaredType))")
            }
        }
    }

    /// Copies the rows, keeping their rowids, with new keys and following foreign keys.
    private func fill(_ copy: String, from table: UUIDKeyMigrationPlan.Table, maps: [String: String]) throws {
        let folded = table.name.sqliteFolded
        let key = plan.migrated.first { $0.table.name.sqliteFolded == folded }?.key.sqliteFolded
        let following = Dictionary(
            plan.following.filter { $0.table.sqliteFolded == folded }.map { ($0.column.sqliteFolded, $0.parentTable.sqliteFolded) },
            uniquingKeysWith: { first, _ in first })
        let old = "strata_old"
        var names: [String] = []
        var values: [String] = []
        if let rowID = table.rowIDName {
            names.append(rowID)
            values.append("\(old).\(rowID)")
        }
        // Generated columns are computed by the copy.
        for column in table.columns where column.hidden == 0 {
            let name = column.name.sqliteFolded
            let reference = "\(old).\(column.name.quotedIdentifier)"
            names.append(column.name.quotedIdentifier)
            if name == key, let map = maps[folded], let rowID = table.rowIDName {
                values.append("(SELECT newKey FROM temp.\(map.quotedIdentifier) WHERE oldRowID = \(old).\(rowID))")
            } else if let parent = following[name], let map = maps[parent] {
                // An unmatched value (a dangling reference) is kept as it was, for the
                // foreign key check to name its row; NULL stays NULL.
                values.append("COALESCE((SELECT newKey FROM temp.\(map.quotedIdentifier) WHERE oldKey = \(reference)), \(reference))")
            } else {
                values.append(reference)
            }
        }
        try db.execute(
            sql: """
                INSERT INTO main.\(copy.quotedIdentifier) (\(names.joined(separator: ", ")))
                SELECT \(values.joined(separator: ", ")) FROM main.\(table.name.quotedIdentifier) AS \(old)
                """)
    }

    private func checkForeignKeys(of table: String) throws {
        let violation = try db.fetchOne(
            sql: "SELECT rowid, parent, fkid FROM pragma_foreign_key_check(?, 'main') LIMIT 1", arguments: [table]
        ) { row in (rowID: try row[0] as Int64?, parent: try row[1] as String, id: try row[2] as Int) }
        guard let violation else { return }
        let column =
            try String.fetchOne(
                db, sql: "SELECT \"from\" FROM pragma_foreign_key_list(?, 'main') WHERE id = ? ORDER BY seq LIMIT 1",
                arguments: [table, violation.id]) ?? ""
        throw UUIDKeyMigrationError.foreignKeyViolation(table: table, rowID: violation.rowID, column: column, parentTable: violation.parent)
    }
}
