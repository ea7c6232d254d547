extension Database {
    /// Whether a table (or view) exists in the main schema.
    public func tableExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(
            self, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name = ? AND type IN ('table', 'view'))", arguments: [name])
            ?? false
    }

    /// The prefix of the names of tables, indexes and triggers that Strata's own modules create
    /// in a user's database (the sync change log, the asset store, the migrations table).
    /// Applications must not name their own objects with it.
    public static let reservedNamePrefix = "strata_"

    /// The app's schema, as the migrator compares it: every object of the main schema but
    /// SQLite's own and Strata's (``reservedNamePrefix``), which the library creates and
    /// upgrades outside the app's migrations — counting them would make a database that sync
    /// or the asset store touched look changed on every launch, and erase it.
    func schemaSignature() throws -> [String] {
        // `_` is LIKE's one-character wildcard: the prefix is escaped.
        let reserved = Self.reservedNamePrefix.map { $0 == "_" ? "\\_" : String($0) }.joined() + "%"
        return try fetchAll(
            sql: """
                SELECT type, name, tbl_name, sql FROM sqlite_schema
                WHERE name NOT LIKE 'sqlite_%' AND name NOT LIKE ? ESCAPE '\\' AND tbl_name NOT LIKE ? ESCAPE '\\'
                ORDER BY type, name
                """,
            arguments: [reserved, reserved]
        ) { row in
            let sql: String? = try row[3]
            return "\(try row[0] as String)|\(try row[1] as String)|\(try row[2] as String)|\(sql ?? "")"
        }
    }

    /// Drops every table, view, index and trigger of the main schema, in one transaction with
    /// foreign key enforcement off.
    func eraseSchema() throws {
        let enforcesForeignKeys = try Bool.fetchOne(self, sql: "PRAGMA foreign_keys") ?? false
        if enforcesForeignKeys { try execute(sql: "PRAGMA foreign_keys = OFF") }
        defer { if enforcesForeignKeys { try? executeIgnoringCancellation(sql: "PRAGMA foreign_keys = ON") } }
        try inTransaction(.immediate) {
            let objects = try fetchAll(sql: "SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%'") { row in
                (type: try row[0] as String, name: try row[1] as String, sql: try row[2] as String?)
            }
            // Views first (they may reference tables), then virtual tables (which own shadow
            // tables), then the rest; indexes and triggers go with their tables.
            for object in objects where object.type == "view" {
                try execute(sql: "DROP VIEW IF EXISTS \(object.name.quotedIdentifier)")
            }
            for object in objects where object.type == "table" && (object.sql ?? "").uppercased().hasPrefix("CREATE VIRTUAL") {
                try execute(sql: "DROP TABLE IF EXISTS \(object.name.quotedIdentifier)")
            }
            for object in objects where object.type == "table" {
                try execute(sql: "DROP TABLE IF EXISTS \(object.name.quotedIdentifier)")
            }
            if try tableExists("sqlite_sequence") {
                try execute(sql: "DELETE FROM sqlite_sequence")
            }
            return .commit
        }
    }
}
