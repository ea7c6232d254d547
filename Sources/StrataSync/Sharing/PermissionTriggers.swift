import StrataSQLite

/// Triggers that refuse, at once, a local write to a record another user shared read-only
/// with this user: the write fails with a `DatabaseError` whose message starts with
/// ``SyncEngine/writePermissionError``, and names the table.
///
/// They are TEMP triggers on the writer, like capture, and installed only once this device
/// holds a read-only record: until then no write pays for the metadata lookup they make.
/// Deleting a shared root stays allowed (it leaves the share), and so do the deletions its
/// foreign keys cascade to.
enum PermissionTriggers {
    static let installedKey = "strata_sync_permission_triggers"

    /// Installs the triggers when the metadatabase holds a read-only record and they are not
    /// installed yet.
    static func installIfNeeded(on db: Database, schema: SyncSchema) throws {
        let needed =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE sharePermission = 'readOnly')")
            ?? false
        guard needed else { return }
        for table in schema.tables {
            for statement in createStatements(for: table) { try db.execute(sql: statement) }
        }
    }

    static func createStatements(for table: SyncedTable) -> [String] {
        let name = table.name
        let quoted = name.quotedIdentifier
        let key = table.primaryKey.quotedIdentifier
        let notSynchronizing = "NOT \(CaptureFunctions.isSynchronizing)()"
        let message = "\(SyncEngine.writePermissionError): \(name) is shared with you read-only".quotedSQLLiteral
        func readOnly(_ table: String, _ primaryKey: String, extra: String = "") -> String {
            """
            EXISTS (SELECT 1 FROM \(MetadatabaseTable.metadata.qualifiedName) WHERE recordType = \(table.quotedSQLLiteral)
                AND recordPrimaryKey = \(primaryKey) AND sharePermission = 'readOnly'\(extra))
            """
        }
        // Moving a row under a read-only parent is a write to that parent's share.
        let intoReadOnlyParent =
            table.parent.map { parent in
                let column = parent.column.quotedIdentifier
                return " OR (NEW.\(column) IS NOT OLD.\(column) AND \(readOnly(parent.parentTable, "NEW.\(column)")))"
            } ?? ""
        var statements = [
            """
            CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(name, "update")) BEFORE UPDATE ON main.\(quoted)
            WHEN \(notSynchronizing) AND (\(readOnly(name, "OLD.\(key)"))\(intoReadOnlyParent))
            BEGIN SELECT RAISE(ABORT, \(message)); END
            """
        ]
        if let parent = table.parent {
            let parentKey = "NEW.\(parent.column.quotedIdentifier)"
            statements.append(
                """
                CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(name, "insert")) BEFORE INSERT ON main.\(quoted)
                WHEN \(notSynchronizing) AND \(readOnly(parent.parentTable, parentKey))
                BEGIN SELECT RAISE(ABORT, \(message)); END
                """)
            // A child goes with its parent: refused only while the parent row is still there.
            let parentStays =
                "EXISTS (SELECT 1 FROM main.\(parent.parentTable.quotedIdentifier) WHERE \(parent.parentColumn.quotedIdentifier) = OLD.\(parent.column.quotedIdentifier))"
            statements.append(
                """
                CREATE TEMP TRIGGER IF NOT EXISTS \(triggerName(name, "delete")) BEFORE DELETE ON main.\(quoted)
                WHEN \(notSynchronizing) AND \(readOnly(name, "OLD.\(key)")) AND \(parentStays)
                BEGIN SELECT RAISE(ABORT, \(message)); END
                """)
        }
        return statements
    }

    private static func triggerName(_ table: String, _ event: String) -> String {
        "strata_sync_permission_\(event)_\(table)".quotedIdentifier
    }
}
