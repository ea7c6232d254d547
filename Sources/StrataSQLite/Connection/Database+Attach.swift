extension Database {
    /// Attaches another database file under a schema name: `SELECT * FROM sync.metadata`.
    ///
    /// Meant for ``Configuration/prepareDatabase(_:)``, so every connection of a pool sees the
    /// schema:
    /// - A missing file is created, by the first connection that can write (a pool opens and
    ///   prepares its writer before any reader).
    /// - On a writer whose main database uses WAL, the attached file is switched to WAL too,
    ///   so its readers run beside its writer as the main file's do. SQLite makes a
    ///   transaction that spans several WAL files atomic in each file, not across them: a crash
    ///   during a commit can keep one file's changes without the other's.
    /// - On the migrator's scratch connection (``ConnectionRole/migrationReference``), a fresh
    ///   private in-memory database is attached instead of the file, so comparing schemas
    ///   never touches real files.
    ///
    /// Attaching is not transactional: rolling back the enclosing transaction does not detach,
    /// and SQLite refuses to detach a schema the current transaction has used. Outside
    /// `prepareDatabase`, attach outside transactions (`writeWithoutTransaction`).
    public func attach(path: String, as schemaName: String) throws {
        try attach(path: path, as: schemaName, pageSizeIfNew: nil)
    }

    /// ``attach(path:as:)``, giving a file this connection creates pages of `pageSizeIfNew`
    /// bytes (a power of two from 512 to 65,536). A file that already holds a database keeps
    /// its own: SQLite only changes the page size of an existing database by a `VACUUM`, and
    /// never one in WAL mode. Set before WAL is enabled, which writes the file's first page.
    package func attach(path: String, as schemaName: String, pageSizeIfNew: Int?) throws {
        let filename = role == .migrationReference ? ":memory:" : path
        try execute(sql: "ATTACH DATABASE ? AS \(schemaName.quotedIdentifier)", arguments: [filename])
        if let pageSizeIfNew, role.canWrite, !isReadOnly {
            try execute(sql: "PRAGMA \(schemaName.quotedIdentifier).page_size = \(pageSizeIfNew)")
        }
        guard role.canWrite, !isReadOnly, filename != ":memory:" else { return }
        let mainMode = try String.fetchOne(self, sql: "PRAGMA main.journal_mode")
        if mainMode?.lowercased() == "wal" {
            try enableWAL(schema: schemaName, describing: "the attached database \(path)")
        }
    }

    /// Attaches the database at `location` under a schema name; see ``attach(path:as:)``.
    /// A ``DatabaseLocation/privateMemory`` location attaches a new private in-memory
    /// database, which only this connection sees.
    public func attach(_ location: DatabaseLocation, as schemaName: String) throws {
        try attach(path: location.sqliteFilename, as: schemaName)
    }

    /// ``attach(_:as:)`` with ``attach(path:as:pageSizeIfNew:)``'s page size for a new file.
    package func attach(_ location: DatabaseLocation, as schemaName: String, pageSizeIfNew: Int?) throws {
        try attach(path: location.sqliteFilename, as: schemaName, pageSizeIfNew: pageSizeIfNew)
    }

    /// Detaches a schema attached with ``attach(path:as:)``.
    public func detach(_ schemaName: String) throws {
        try execute(sql: "DETACH DATABASE \(schemaName.quotedIdentifier)")
    }

    /// The schema names of the connection (`main`, `temp`, and attached ones).
    public func schemaNames() throws -> [String] {
        try String.fetchAll(self, sql: "SELECT name FROM pragma_database_list ORDER BY seq")
    }

    /// Switches a schema's file to WAL, or throws naming the file and the mode SQLite kept
    /// (WAL is refused on some file systems and for databases opened read-only).
    func enableWAL(schema: String, describing file: String, requirement: String = "") throws {
        let sql = "PRAGMA \(schema.quotedIdentifier).journal_mode = WAL"
        let mode = try String.fetchOne(self, sql: sql)
        guard mode?.lowercased() == "wal" else {
            throw DatabaseError(
                resultCode: .error,
                message: "could not enable WAL mode for \(file) (journal_mode is \(mode ?? "unknown"))\(requirement)",
                sql: sql)
        }
    }
}
