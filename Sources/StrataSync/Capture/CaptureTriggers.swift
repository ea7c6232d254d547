import StrataSQLite

/// The temporary triggers that log every local change to a synced table.
///
/// They are TEMP triggers on the writer connection, so they capture writes made through this
/// queue or pool; a write from another process or connection is not seen (SQLite runs a
/// temporary trigger only on the connection that created it). A persistent trigger would fire
/// everywhere, but would need the engine's SQL functions on every connection that ever opens
/// the file, including other tools, which would then fail.
///
/// Each trigger skips writes made by the engine itself (`strata_sync_is_synchronizing()`).
/// An update logs only the columns whose value changed (`IS NOT` treats NULLs as values), and
/// logs nothing when none did. Changing a primary key logs a delete of the old key and a save
/// of the new one.
enum CaptureTriggers {
    /// The statements creating the triggers for `table`.
    static func createStatements(for table: SyncedTable) -> [String] {
        let name = table.name
        let quoted = name.quotedIdentifier
        let key = table.primaryKey.quotedIdentifier
        let literal = name.quotedSQLLiteral
        let notSynchronizing = "NOT \(CaptureFunctions.isSynchronizing)()"
        func log(_ operation: String, key: String, columns: String) -> String {
            """
            INSERT INTO \(ChangeLog.tableName) (tableName, primaryKey, operation, changedColumns, version, "transaction")
            VALUES (\(literal), \(key), '\(operation)', \(columns), \(CaptureFunctions.version)(), \(CaptureFunctions.transaction)());
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
            """
            CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(name, "insert")) AFTER INSERT ON main.\(quoted)
            WHEN \(notSynchronizing)
            BEGIN \(log("save", key: "NEW.\(key)", columns: "NULL")) END
            """,
            """
            CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(name, "update")) AFTER UPDATE ON main.\(quoted)
            WHEN \(notSynchronizing) AND OLD.\(key) IS NEW.\(key) AND (\(anyChanged))
            BEGIN \(log("save", key: "NEW.\(key)", columns: changed)) END
            """,
            """
            CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(name, "rekey")) AFTER UPDATE OF \(key) ON main.\(quoted)
            WHEN \(notSynchronizing) AND OLD.\(key) IS NOT NEW.\(key)
            BEGIN \(log("delete", key: "OLD.\(key)", columns: "NULL")) \(log("save", key: "NEW.\(key)", columns: "NULL")) END
            """,
            """
            CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(name, "delete")) AFTER DELETE ON main.\(quoted)
            WHEN \(notSynchronizing)
            BEGIN \(log("delete", key: "OLD.\(key)", columns: "NULL")) END
            """,
        ]
    }

    /// Triggers refusing a key that is not text, on a key column whose affinity lets other
    /// values through (`id BLOB`, `id UUID`, an untyped `id`): a UUID bound as 16 bytes, or an
    /// integer, would name a record no other device could write back the same way. A TEXT
    /// column turns numbers into text itself and needs none. They run for the engine's own
    /// writes too, which only ever write text keys.
    static func keyTypeGuards(for table: SyncedTable) -> [String] {
        guard let key = table.columns.first(where: { $0.name == table.primaryKey }),
            ColumnAffinity(declaredType: key.declaredType) != .text
        else { return [] }
        let quotedKey = key.name.quotedIdentifier
        let message =
            "synced table \"\(table.name)\": primary key \"\(key.name)\" must hold text (a UUID stored as text, Strata's default), not a number or a BLOB"
        return ["insert": "INSERT", "rekey": "UPDATE OF \(quotedKey)"].sorted { $0.key < $1.key }.map { event, when in
            """
            CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(table.name, "keytype_\(event)")) AFTER \(when) ON main.\(table.name.quotedIdentifier)
            WHEN typeof(NEW.\(quotedKey)) <> 'text'
            BEGIN SELECT RAISE(ABORT, \(message.quotedSQLLiteral)); END
            """
        }
    }

    /// The statements dropping the triggers for `table`.
    static func dropStatements(for table: SyncedTable) -> [String] {
        ["insert", "update", "rekey", "delete", "keytype_insert", "keytype_rekey"].map {
            "DROP TRIGGER IF EXISTS temp.\(triggerName(table.name, $0))"
        }
    }

    private static func triggerName(_ table: String, _ event: String) -> String {
        "strata_sync_\(event)_\(table)".quotedIdentifier
    }
}
