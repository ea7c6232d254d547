extension Database {
    /// Whether a table (or view) exists in the main schema.
    public func tableExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(self, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name = ? AND type IN ('table', 'view'))", arguments: [name]) ?? false
    }

    func schemaSignature() throws -> [String] {
        try fetchAll(sql: "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name") { row in
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
