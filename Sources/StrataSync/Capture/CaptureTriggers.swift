import Logging
import StrataSQLite

/// The triggers that log every local change to a synced table, kept in the user's file.
///
/// Persistent triggers fire on every connection that writes the file, in this process or any
/// other, so a command-line tool or an app extension writing the same file is captured too.
/// They call the capture SQL functions (`CaptureFunctions`), which every Strata connection
/// that writes a synced file has; any other connection's write to a synced table fails with
/// `no such function` (a capture function such as `strata_sync_is_synchronizing`) and changes nothing, where a temporary
/// trigger would have let it through unsynced.
///
/// Each trigger skips writes made by the engine itself (`strata_sync_is_synchronizing()`).
/// An update logs only the columns whose value changed (`IS NOT` treats NULLs as values), and
/// logs nothing when none did. Changing a primary key logs a delete of the old key and a save
/// of the new one.
///
/// They name every column of their table, which would make SQLite refuse a migration that
/// drops one: connections with the capture functions take them down before each migration and
/// build them again after it, in its transaction (`installMigrationHook(on:)`).
enum CaptureTriggers {
    /// One trigger: its name (unquoted) and the `CREATE TRIGGER` statement, as SQLite keeps it
    /// in `sqlite_master`.
    struct Trigger: Hashable {
        var name: String
        var sql: String
    }

    /// The triggers for `table`.
    static func triggers(for table: SyncedTable) -> [Trigger] {
        let name = table.name
        let quoted = name.quotedIdentifier
        let key = table.primaryKey.quotedIdentifier
        let literal = name.quotedSQLLiteral
        let notSynchronizing = "NOT \(CaptureFunctions.isSynchronizing)()"
        // The version comes first (SQLite computes the values in the table's column order):
        // the first change of a transaction opens its numbering from the log's last entry
        // and the clock floor, read under the write lock (see `CaptureSession`).
        let logTable = ChangeLog.tableName
        let lastEntry = "FROM \(logTable) ORDER BY sequence DESC LIMIT 1"
        let version = """
            COALESCE(\(CaptureFunctions.version)(), \(CaptureFunctions.beginTransaction)(\
            (SELECT "transaction" \(lastEntry)), (SELECT version \(lastEntry)), (SELECT packedTime FROM \(CaptureClockFloor.tableName))))
            """
        // A key the table gains must be text Swift reads as SQLite stores it (valid UTF-8):
        // another would sync under a name that no longer finds its row. Checked in `WHEN`, by
        // the call that also leaves the engine's own writes out (0 for those); deletes and
        // updates of rows written before are let through.
        func capturesKey(_ value: String) -> String {
            "\(CaptureFunctions.capturesKey)(\(value), \(literal), \(table.primaryKey.quotedSQLLiteral))"
        }
        func log(_ operation: String, key: String, columns: String) -> String {
            """
            INSERT INTO \(logTable) (tableName, primaryKey, operation, changedColumns, version, "transaction")
            VALUES (\(literal), \(key), '\(operation)', \(columns), \(version), \(CaptureFunctions.transaction)());
            """
        }
        let values = table.valueColumns
        let changed =
            values.isEmpty
            ? "''"
            : values.map { column in
                let quotedColumn = column.quotedIdentifier
                return "CASE WHEN OLD.\(quotedColumn) IS NOT NEW.\(quotedColumn) THEN \(column.quotedSQLLiteral) || char(31) ELSE '' END"
            }.joined(separator: " || ")
        let anyChanged =
            values.isEmpty
            ? "0"
            : values.map { "OLD.\($0.quotedIdentifier) IS NOT NEW.\($0.quotedIdentifier)" }.joined(separator: " OR ")
        return keyTypeGuards(for: table) + [
            trigger(
                name, "insert",
                """
                CREATE TRIGGER \(triggerName(name, "insert").quotedIdentifier) AFTER INSERT ON \(quoted)
                WHEN \(capturesKey("NEW.\(key)"))
                BEGIN \(log("save", key: "NEW.\(key)", columns: "NULL")) END
                """),
            trigger(
                name, "update",
                """
                CREATE TRIGGER \(triggerName(name, "update").quotedIdentifier) AFTER UPDATE ON \(quoted)
                WHEN \(notSynchronizing) AND OLD.\(key) IS NEW.\(key) AND (\(anyChanged))
                BEGIN \(log("save", key: "NEW.\(key)", columns: changed)) END
                """),
            trigger(
                name, "rekey",
                """
                CREATE TRIGGER \(triggerName(name, "rekey").quotedIdentifier) AFTER UPDATE OF \(key) ON \(quoted)
                WHEN OLD.\(key) IS NOT NEW.\(key) AND \(capturesKey("NEW.\(key)"))
                BEGIN \(log("delete", key: "OLD.\(key)", columns: "NULL")) \(log("save", key: "NEW.\(key)", columns: "NULL")) END
                """),
            trigger(
                name, "delete",
                """
                CREATE TRIGGER \(triggerName(name, "delete").quotedIdentifier) AFTER DELETE ON \(quoted)
                WHEN \(notSynchronizing)
                BEGIN \(log("delete", key: "OLD.\(key)", columns: "NULL")) END
                """),
        ]
    }

    /// Triggers refusing a key that is not text, on a key column whose affinity lets other
    /// values through (`id BLOB`, `id UUID`, an untyped `id`): a UUID bound as 16 bytes, or an
    /// integer, would name a record no other device could write back the same way. A TEXT
    /// column turns numbers into text itself and needs none. They run for the engine's own
    /// writes too, which only ever write text keys.
    static func keyTypeGuards(for table: SyncedTable) -> [Trigger] {
        guard let key = table.columns.first(where: { $0.name == table.primaryKey }),
            ColumnAffinity(declaredType: key.declaredType) != .text
        else { return [] }
        let quotedKey = key.name.quotedIdentifier
        let message =
            "synced table \"\(table.name)\": primary key \"\(key.name)\" must hold text (a UUID stored as text, Strata's default), not a number, a BLOB or NULL"
        return ["insert": "INSERT", "rekey": "UPDATE OF \(quotedKey)"].sorted { $0.key < $1.key }.map { event, when in
            trigger(
                table.name, "keytype_\(event)",
                """
                CREATE TRIGGER \(triggerName(table.name, "keytype_\(event)").quotedIdentifier) AFTER \(when) ON \(table.name.quotedIdentifier)
                WHEN typeof(NEW.\(quotedKey)) <> 'text'
                BEGIN SELECT RAISE(ABORT, \(message.quotedSQLLiteral)); END
                """)
        }
    }

    /// Creates, replaces or keeps the triggers of `tables`: only triggers whose SQL differs
    /// are replaced, so starting an engine on an unchanged schema changes no schema (which
    /// would make every other connection prepare its statements again).
    static func synchronize(_ tables: [SyncedTable], in db: Database) throws {
        let names = Set(tables.map(\.name))
        let existing = try db.fetchAll(
            sql: "SELECT name, tbl_name, sql FROM main.sqlite_master WHERE type = 'trigger' AND name GLOB ?",
            arguments: [namePrefix + "*"]
        ) { row -> (name: String, table: String, sql: String) in (try row[0], try row[1], try row[2]) }
        .filter { names.contains($0.table) }
        var wanted: [String: String] = [:]
        for table in tables {
            for trigger in triggers(for: table) { wanted[trigger.name] = trigger.sql }
        }
        for trigger in existing where wanted[trigger.name] != trigger.sql {
            try db.execute(sql: "DROP TRIGGER main.\(trigger.name.quotedIdentifier)")
        }
        let kept = Dictionary(existing.map { ($0.name, $0.sql) }, uniquingKeysWith: { first, _ in first })
        for (name, statement) in wanted.sorted(by: { $0.key < $1.key }) where kept[name] != statement {
            try db.execute(sql: statement)
        }
    }

    /// Takes the triggers down before each migration applied on `db` and builds them again
    /// after it, for the tables that still exist and that sync still accepts, in the
    /// migration's transaction.
    static func installMigrationHook(on db: Database) {
        final class Tables { var names: [String] = [] }
        let tables = Tables()
        db.setMigrationHook(
            "strata_sync_capture",
            before: { db in
                let triggers = try db.fetchAll(
                    sql: "SELECT name, tbl_name FROM main.sqlite_master WHERE type = 'trigger' AND name GLOB ?",
                    arguments: [namePrefix + "*"]
                ) { row -> (name: String, table: String) in (try row[0], try row[1]) }
                tables.names = Array(Set(triggers.map(\.table))).sorted()
                for trigger in triggers { try db.execute(sql: "DROP TRIGGER main.\(trigger.name.quotedIdentifier)") }
            },
            after: { db in
                defer { tables.names = [] }
                try synchronize(capturableTables(tables.names, in: db), in: db)
            })
    }

    /// Mends the triggers of the recorded synced tables after a schema change: builds those a
    /// rebuild of their table took away, and replaces those a column rename left naming the
    /// old column. Changes written to such a table before the mend were not logged: that is
    /// said in the log, as an error.
    ///
    /// A table the change left in a shape sync refuses loses its triggers (stale ones could
    /// name columns that are gone, and fail every write).
    static func mend(in db: Database) throws {
        let recorded = try CaptureTables.recorded(in: db)
        guard !recorded.isEmpty else { return }
        let tables = try capturableTables(recorded, in: db)
        let present = Set(
            try String.fetchAll(
                db, sql: "SELECT name FROM main.sqlite_master WHERE type = 'trigger' AND name GLOB ?", arguments: [namePrefix + "*"]))
        let lost = tables.filter { table in triggers(for: table).contains { !present.contains($0.name) } }.map(\.name)
        try inOneTransaction(db) {
            try dropTriggers(ofTablesOtherThan: tables.map(\.name), in: db)
            try synchronize(tables, in: db)
        }
        if !lost.isEmpty {
            logger.error(
                "the capture triggers of \(lost.joined(separator: ", ")) were gone (a program that does not use Strata rebuilt or altered the table?): they are back, but changes written to those tables in between were not logged for sync"
            )
        }
    }

    /// Runs `body` in the transaction open on `db`, or in one of its own: a trigger dropped to
    /// be replaced is never missing for a write another process makes meanwhile, nor after a
    /// crash.
    static func inOneTransaction(_ db: Database, _ body: () throws -> Void) throws {
        if db.isInsideTransaction { return try body() }
        try db.inTransaction(.immediate) {
            try body()
            return .commit
        }
    }

    /// The tables among `names` that exist and that sync accepts as they are now.
    ///
    /// A schema change can leave a synced table in a shape sync refuses, perhaps on purpose,
    /// the app's next version no longer syncing it. That table is left out and the refusal is
    /// logged: the engine refuses it at start, naming the rule, if the app still syncs it.
    /// Failing the migration, or every write through this connection, would instead keep the
    /// app from ever getting there.
    static func capturableTables(_ names: [String], in db: Database) throws -> [SyncedTable] {
        let existing = try names.filter { try db.tableExists($0) }
        guard !existing.isEmpty else { return [] }
        do {
            return try SyncSchema.read(tables: existing, in: db).tables
        } catch let error as SyncSchemaError {
            // The largest set sync accepts, grown a table at a time: a child is accepted once
            // the parent it refers to is.
            var accepted: [String] = []
            var grew = true
            while grew {
                grew = false
                for name in existing where !accepted.contains(name) {
                    if (try? SyncSchema.read(tables: accepted + [name], in: db)) != nil {
                        accepted.append(name)
                        grew = true
                    }
                }
            }
            let refused = existing.filter { !accepted.contains($0) }
            logger.error(
                "writes to \(refused.joined(separator: ", ")) are no longer captured for sync: \(error)")
            return try SyncSchema.read(tables: accepted, in: db).tables
        }
    }

    /// Drops the triggers of tables that are not in `names`: a table that left the synced set.
    static func dropTriggers(ofTablesOtherThan names: [String], in db: Database) throws {
        let keep = Set(names)
        let triggers = try db.fetchAll(
            sql: "SELECT name, tbl_name FROM main.sqlite_master WHERE type = 'trigger' AND name GLOB ?",
            arguments: [namePrefix + "*"]
        ) { row -> (name: String, table: String) in (try row[0], try row[1]) }
        for trigger in triggers where !keep.contains(trigger.table) {
            try db.execute(sql: "DROP TRIGGER main.\(trigger.name.quotedIdentifier)")
        }
    }

    private static let logger = Logger(label: "strata.sync")

    /// Every capture trigger's name starts with it.
    static let namePrefix = "strata_sync_capture_"

    private static func triggerName(_ table: String, _ event: String) -> String {
        namePrefix + "\(event)_\(table)"
    }

    private static func trigger(_ table: String, _ event: String, _ sql: String) -> Trigger {
        Trigger(name: triggerName(table, event), sql: sql)
    }
}
