extension Database {
    /// Attaches another database file under a schema name: `SELECT * FROM sync.metadata`.
    ///
    /// Attaching is not transactional: rolling back the enclosing transaction does not detach,
    /// and SQLite refuses to detach a schema the current transaction has used. Attach outside
    /// transactions (`writeWithoutTransaction`); in a pool, attach in
    /// `Configuration.prepareDatabase` so every connection sees the schema.
    public func attach(path: String, as schemaName: String) throws {
        try execute(sql: "ATTACH DATABASE ? AS \(schemaName.quotedIdentifier)", arguments: [path])
    }

    /// Detaches a schema attached with ``attach(path:as:)``.
    public func detach(_ schemaName: String) throws {
        try execute(sql: "DETACH DATABASE \(schemaName.quotedIdentifier)")
    }

    /// The schema names of the connection (`main`, `temp`, and attached ones).
    public func schemaNames() throws -> [String] {
        try String.fetchAll(self, sql: "SELECT name FROM pragma_database_list ORDER BY seq")
    }
}
