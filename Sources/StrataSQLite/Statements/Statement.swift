import CSQLite

/// A prepared statement of one ``Database``.
///
/// Statements come from ``Database/makeStatement(sql:)`` (yours to keep) or
/// ``Database/cachedStatement(sql:)`` (owned by the connection's bounded LRU cache). Like the
/// connection, a statement is confined to the connection's accesses: executing it, or reading
/// its ``columnNames``, outside of one stops the process (see ``Database``). A statement kept
/// from ``Database/makeStatement(sql:)`` may be used again in a later access to the same
/// connection.
public final class Statement {
    /// The underlying `sqlite3_stmt`, for calls Strata does not wrap.
    public let handle: OpaquePointer
    /// The SQL the statement was prepared from.
    public let sql: String
    /// Whether a fetch or cursor is currently stepping through the statement. A cached statement
    /// that is busy is never handed out again until it is reset.
    // Unchecked exclusivity: touched by every execution, confined to the connection's executor
    // (see `Database`).
    @exclusivity(unchecked)
    var isBusy = false
    /// The tables and columns the statement reads, recorded when it was prepared.
    public internal(set) var readRegion = DatabaseRegion()
    /// The tables the statement writes, recorded when it was prepared on a writer.
    @exclusivity(unchecked)
    var writtenTables: Set<QualifiedTable> = []
    private var cachedColumnNames: [String]?
    private var cachedColumnIndexes: [String: Int]?
    unowned let database: Database
    /// The connection's confinement, held directly so that a cursor checks it once per row
    /// without loading the unowned `database`.
    let confinement: AccessConfinement

    init(handle: OpaquePointer, sql: String, database: Database) {
        self.handle = handle
        self.sql = sql
        self.database = database
        self.confinement = database.confinement
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The number of columns in the statement's result rows.
    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    /// Whether the statement makes no direct change to the database file.
    public var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// The names of the result columns, read once per statement.
    public var columnNames: [String] {
        confinement.check("Statement.columnNames", sql: sql)
        return uncheckedColumnNames
    }

    /// ``columnNames`` for `Row`'s name subscript, which runs per column: its statement was
    /// checked when it started executing.
    private var uncheckedColumnNames: [String] {
        if let cachedColumnNames, cachedColumnNames.count == columnCount { return cachedColumnNames }
        let names = (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
        cachedColumnNames = names
        cachedColumnIndexes = nil
        return names
    }

    /// Index of a result column by name (case-insensitive, as SQLite's own names are), computed
    /// once per statement rather than per row.
    func columnIndex(named name: String) -> Int? {
        if cachedColumnIndexes == nil || cachedColumnNames?.count != columnCount {
            var indexes: [String: Int] = [:]
            for (index, column) in uncheckedColumnNames.enumerated().reversed() {
                indexes[column.lowercased()] = index
            }
            cachedColumnIndexes = indexes
        }
        return cachedColumnIndexes?[name.lowercased()]
    }

    /// The bookkeeping every execution starts with: the confinement and cancellation checks,
    /// the read region for an observation that is recording, and the tables this statement
    /// writes for the writer's change tracking.
    @usableFromInline
    func willExecute() throws {
        confinement.check("executing a Statement", sql: sql)
        // `database` is unowned: one strong load here rather than one per use.
        let database = self.database
        try database.checkInterruption(sql: sql)
        if database.regionRecorder != nil {
            database.regionRecorder?.formUnion(readRegion)
        }
        if !writtenTables.isEmpty, let tracker = database.changeTracker {
            tracker.statementWillWrite(writtenTables)
        }
    }

    /// Binds arguments, runs `body` with the statement ready to step, then resets it.
    ///
    /// Every fetch and execute goes through here, so cancellation is checked once per
    /// statement: `sqlite3_interrupt` only stops statements that are running, and SQLite clears
    /// the interrupt flag when the next statement starts, so an interruption that arrives
    /// between two statements would otherwise be lost.
    @usableFromInline
    func withExecution<Result>(arguments: StatementArguments, _ body: (Statement) throws -> Result) throws -> Result {
        try willExecute()
        isBusy = true
        defer {
            sqlite3_reset(handle)
            isBusy = false
            if database.pendingTransactionEnd != nil { database.deliverTransactionEnd() }
        }
        if !arguments.isEmpty || sqlite3_bind_parameter_count(handle) > 0 {
            try arguments.bind(to: self)
        }
        return try body(self)
    }

    /// ``withExecution(arguments:_:)`` for a statement with a single parameter, bound to
    /// `value` directly: no argument array, no existential. Throws the same errors.
    @usableFromInline
    func withExecution<Value: DatabaseValueConvertible, Result>(binding value: Value, _ body: (Statement) throws -> Result) throws -> Result
    {
        guard sqlite3_bind_parameter_count(handle) == 1 else {
            return try withExecution(arguments: [value], body)
        }
        try willExecute()
        isBusy = true
        defer {
            sqlite3_reset(handle)
            isBusy = false
            if database.pendingTransactionEnd != nil { database.deliverTransactionEnd() }
        }
        let code = value.bind(to: handle, at: 1)
        if code != SQLITE_OK {
            throw DatabaseError(connection: sqlite3_db_handle(handle), code: code, sql: sql, arguments: [value])
        }
        return try body(self)
    }

    /// Steps once. Returns true when a row is available.
    @usableFromInline @inline(__always)
    func step(arguments: @autoclosure () -> StatementArguments) throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw database.error(code: code, sql: sql, arguments: arguments())
    }

    /// Executes the statement to completion, ignoring any rows.
    public func execute(arguments: StatementArguments = []) throws {
        try withExecution(arguments: arguments) { statement in
            while try statement.step(arguments: arguments) {}
        }
    }
}
