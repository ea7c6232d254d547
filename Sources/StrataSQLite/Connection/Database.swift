import CSQLite
import Foundation

/// One SQLite connection.
///
/// A `Database` is confined to the executor of the queue or pool that owns it: you receive one
/// as the argument of `read`, `write` and their variants, and it must not escape that closure.
///
/// The confinement is checked: using a `Database` — or a ``Statement`` or ``RecordCursor`` made
/// from it — after its closure has returned, or from another thread while the closure runs,
/// stops the process with a message that names the misuse and the access it escaped from
/// (`let db = try pool.read { $0 }` compiles, but `db` cannot be used). Return the values you
/// need from the closure instead.
public final class Database {
    /// The underlying `sqlite3` connection, for calls Strata does not wrap.
    public let handle: OpaquePointer
    /// The configuration the connection was opened with.
    public let configuration: Configuration
    /// A name for traces and errors: the configuration's label and the connection's role.
    public let description: String
    /// What the connection is for in its queue or pool: ``Configuration/prepareDatabase(_:)``
    /// closures read it to do writer-only work, or to skip the migrator's scratch connection.
    public let role: ConnectionRole
    /// Where the connection's main database lives: modules that keep data beside it (the sync
    /// metadatabase) derive their location from it. The migrator's scratch connection reports
    /// ``DatabaseLocation/privateMemory``.
    public let location: DatabaseLocation
    /// The kind of transaction `inTransaction` and writes begin by default.
    public internal(set) var defaultTransactionKind: TransactionKind
    /// The thread allowed to use the connection now; checked by every entry point.
    let confinement: AccessConfinement

    // The properties marked `@exclusivity(unchecked)` are read or written by every statement
    // execution; the connection is confined to one serial executor, so Swift's dynamic
    // exclusivity checks on them can never fire and cost about 2 % of an insert (callgrind).
    @exclusivity(unchecked)
    var statementCache: StatementCache
    @exclusivity(unchecked)
    var recordStatements = RecordStatementCache()
    /// Receives the tables the statement being prepared reads (see the authorizer).
    var preparingRegion: DatabaseRegion?
    /// Receives the tables the statement being prepared writes, on writers (see the authorizer).
    var preparingWrites: Set<QualifiedTable>?
    /// Receives the regions of statements executed inside `recordingReadRegion`.
    @exclusivity(unchecked)
    var regionRecorder: DatabaseRegion?
    /// Set on writers, whose commits are announced to observers.
    @exclusivity(unchecked)
    var changeTracker: ChangeTracker?
    var disablesTruncateOptimization = false
    /// The table or view a `DROP` statement being prepared removes (see the authorizer).
    var tableBeingDropped: String?
    let interruptState: InterruptState
    var savepointCounter = 0
    /// Set while ``executeIgnoringCancellation(sql:)`` runs cleanup SQL.
    var ignoresCancellation = false
    var traces = TraceListeners()
    var authorizers: [(id: Int, body: (AuthorizerRequest) -> AuthorizerDecision)] = []
    var nextListenerID = 1
    /// The listeners SQLite's update, commit and rollback hooks fan out to.
    @exclusivity(unchecked)
    var transactionListeners: [any TransactionListener] = []
    /// Work run around each migration, in its transaction, keyed by owner (see
    /// `setMigrationHook(_:before:after:)`).
    var migrationHooks: [(owner: String, before: (Database) throws -> Void, after: (Database) throws -> Void)] = []
    /// Work run when a write access finds the schema changed since this connection last
    /// looked, keyed by owner (see `setSchemaChangeHook(_:_:)`).
    var schemaChangeHooks: [(owner: String, body: (Database) throws -> Void)] = []
    /// The `schema_version` the hooks last saw.
    var hookedSchemaVersion: Int64 = -1
    /// The listeners that want ``TransactionListener/rowDidChange(_:)``, a subset of the above.
    @exclusivity(unchecked)
    var rowChangeListeners: [any TransactionListener] = []
    var hooksInstalled = false
    /// Set by the commit or rollback hook when listeners wait to hear of it; read after every
    /// statement.
    @exclusivity(unchecked)
    var pendingTransactionEnd: TransactionEnd?
    /// The error a listener threw to refuse a commit, reported instead of SQLite's
    /// `SQLITE_CONSTRAINT_COMMITHOOK`.
    var refusedCommitError: (any Error)?
    private var isClosed = false

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - location: where the main database lives.
    ///   - readOnly: open with `SQLITE_OPEN_READONLY`.
    ///   - role: what the connection is for; `number` tells readers apart in descriptions.
    init(location: DatabaseLocation, configuration: Configuration, readOnly: Bool, role: ConnectionRole, number: Int? = nil) throws {
        SQLiteLibrary.prepareOnce()
        let path = location.sqliteFilename
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI | SQLITE_OPEN_EXRESCODE
        // Each connection is confined to one serial executor, so SQLite's per-connection mutex
        // only costs time; NOMUTEX is the multi-thread mode SQLite documents for that case.
        flags |= readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, flags, nil)
        guard code == SQLITE_OK, let connection else {
            let error = DatabaseError(connection: connection, code: code)
            sqlite3_close_v2(connection)
            throw DatabaseError(
                resultCode: error.extendedResultCode,
                message: "could not open database at \(path): \(error.message)")
        }
        self.handle = connection
        self.configuration = configuration
        self.role = role
        self.location = location
        self.description = (configuration.label ?? "database") + "." + role.rawValue + (number.map(String.init) ?? "")
        // The opening thread runs the preparations; the queue or pool releases it when it
        // takes the connection (`SerialConnection.init`).
        self.confinement = AccessConfinement(connection: description)
        self.defaultTransactionKind = readOnly ? .deferred : .immediate
        self.statementCache = StatementCache(capacity: configuration.statementCacheCapacity)
        self.interruptState = InterruptState(handle: connection)
        sqlite3_extended_result_codes(connection, 1)
        installAuthorizer()
        do {
            let milliseconds =
                configuration.busyTimeout.components.seconds * 1000
                + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
            sqlite3_busy_timeout(connection, Int32(clamping: milliseconds))
            if configuration.foreignKeysEnabled {
                try execute(sql: "PRAGMA foreign_keys = ON")
            }
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Finalizes the cached statements and closes the connection. Later use throws.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        interruptState.close()
        statementCache.removeAll()
        recordStatements.removeAll()
        sqlite3_set_authorizer(handle, nil, nil)
        uninstallHooks()
        changeTracker = nil
        transactionListeners.removeAll()
        rowChangeListeners.removeAll()
        // close_v2 defers the real close until statements still held elsewhere are finalized,
        // instead of failing with SQLITE_BUSY.
        sqlite3_close_v2(handle)
        traces.removeAll(from: handle)
    }

    // MARK: - Executing

    /// Executes one or more statements separated by semicolons.
    ///
    /// Positional arguments are consumed statement by statement, in order, and their count is
    /// checked against the parameters of the whole text before any statement runs: a text
    /// given too many or too few arguments changes nothing. (When a statement cannot be
    /// prepared before the ones above it have run, such as an `INSERT` into a table the text
    /// creates, the statements run inside a savepoint instead, rolled back if the count turns
    /// out wrong.) A single statement is kept in the statement cache, so repeating the same
    /// SQL does not prepare it again.
    ///
    /// - Throws: ``DatabaseError`` naming the SQL; `SQLITE_MISUSE` for text that holds a NUL
    ///   character, which SQLite would take for the end of the text and silently ignore what
    ///   follows.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        // Before the statement cache is touched: a connection used from two threads at once
        // would corrupt it before any statement ran.
        confinement.check("Database.execute(sql:arguments:)", sql: sql)
        if let statement = statementCache.statement(for: sql), !statement.isBusy {
            try statement.execute(arguments: arguments)
            return
        }
        var scanner = try StatementScanner(sql: sql, database: self, persistent: true)
        var prepared: [Statement] = []
        var isComplete = true
        while true {
            do {
                guard let statement = try scanner.next() else { break }
                prepared.append(statement)
            } catch {
                // Possibly a statement that needs the ones above it to have run first.
                guard !prepared.isEmpty else { throw error }
                isComplete = false
                break
            }
        }
        if prepared.count == 1, isComplete {
            try prepared[0].execute(arguments: arguments)
            return
        }
        var positional = arguments.positional[...]
        func run(_ statement: Statement) throws {
            let count = Int(sqlite3_bind_parameter_count(statement.handle))
            var slice = StatementArguments(Array(positional.prefix(count)))
            slice.named = arguments.named
            slice.ignoresUnknownNames = true
            positional = positional.dropFirst(count)
            try statement.execute(arguments: slice)
        }
        if isComplete {
            if arguments.named.isEmpty {
                let parameterCount = prepared.reduce(0) { $0 + Int(sqlite3_bind_parameter_count($1.handle)) }
                if parameterCount != positional.count {
                    throw DatabaseError(
                        resultCode: .range,
                        message:
                            "wrong number of arguments: the statements have \(parameterCount) parameter(s), \(positional.count) given; nothing was executed",
                        sql: sql, arguments: arguments)
                }
            }
            for statement in prepared { try run(statement) }
            return
        }
        try savepointIf(!arguments.positional.isEmpty) {
            for statement in prepared { try run(statement) }
            while let statement = try scanner.next() { try run(statement) }
            if !positional.isEmpty {
                throw DatabaseError(
                    resultCode: .range,
                    message: "wrong number of arguments: \(positional.count) argument(s) left unused; the statements were rolled back",
                    sql: sql, arguments: arguments)
            }
        }
    }

    private func savepointIf(_ condition: Bool, _ body: () throws -> Void) throws {
        if condition { try savepoint(body) } else { try body() }
    }

    /// Executes SQL written with interpolated values: `db.execute("DELETE FROM players WHERE id = \(id)")`.
    public func execute(_ sql: SQL) throws {
        try execute(sql: sql.text, arguments: sql.statementArguments)
    }

    /// Prepares a statement that is not cached: yours to keep and reuse within this connection.
    public func makeStatement(sql: String) throws -> Statement {
        confinement.check("Database.makeStatement(sql:)", sql: sql)
        var scanner = try StatementScanner(sql: sql, database: self, persistent: false)
        guard let result = try scanner.next() else {
            throw DatabaseError(resultCode: .misuse, message: "no SQL statement to prepare", sql: sql)
        }
        if try scanner.next() != nil {
            throw DatabaseError(resultCode: .misuse, message: "makeStatement expects a single statement, got several", sql: sql)
        }
        return result
    }

    /// Returns the cached prepared statement for this SQL, preparing and caching it on first use.
    public func cachedStatement(sql: String) throws -> Statement {
        confinement.check("Database.cachedStatement(sql:)", sql: sql)
        if let statement = statementCache.statement(for: sql) { return statement }
        let statement = try makeStatement(sql: sql)
        statementCache.insert(statement, for: sql)
        return statement
    }

    /// The statement a fetch should use: the cached one, or a fresh one when the cached one is
    /// being stepped by an enclosing fetch or cursor with the same SQL.
    @usableFromInline
    func statementForFetch(sql: String) throws -> Statement {
        let statement = try cachedStatement(sql: sql)
        return statement.isBusy ? try makeStatement(sql: sql) : statement
    }

    /// Prepares the statement at `start`, for ``StatementScanner``: records what it reads and
    /// writes, and caches it when `isWholeText` says it is the whole of `sql`.
    ///
    /// - Returns: the statement (nil for only whitespace or a comment) and the offset, relative
    ///   to the text's first byte, where the next statement starts.
    func prepareStatement(
        at start: UnsafePointer<CChar>, byteCount: Int, sql: String, persistent: Bool,
        isWholeText: (_ consumed: Int) -> Bool
    ) throws -> (statement: Statement?, end: Int) {
        try checkOpen(sql: sql)
        var statementHandle: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        let flags = UInt32(persistent ? SQLITE_PREPARE_PERSISTENT : 0)
        preparingRegion = DatabaseRegion()
        if changeTracker != nil { preparingWrites = [] }
        let code = sqlite3_prepare_v3(handle, start, Int32(byteCount), flags, &statementHandle, &tail)
        let readRegion = preparingRegion ?? DatabaseRegion()
        preparingRegion = nil
        let writtenTables = preparingWrites ?? []
        preparingWrites = nil
        guard code == SQLITE_OK else {
            throw error(code: code, sql: sql, arguments: nil)
        }
        let consumed = max(tail.map { $0 - start } ?? byteCount, 1)
        guard let statementHandle else { return (nil, consumed) }
        let wholeText = isWholeText(consumed)
        let statement = Statement(
            handle: statementHandle, sql: wholeText ? sql : String(cString: sqlite3_sql(statementHandle)), database: self)
        statement.readRegion = readRegion
        statement.writtenTables = writtenTables
        if wholeText && persistent {
            statementCache.insert(statement, for: sql)
        }
        return (statement, consumed)
    }

    // MARK: - State

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertedRowID: Int64 {
        confinement.check("Database.lastInsertedRowID")
        return sqlite3_last_insert_rowid(handle)
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changesCount: Int {
        confinement.check("Database.changesCount")
        return Int(sqlite3_changes64(handle))
    }

    /// Rows changed since the connection opened.
    public var totalChangesCount: Int {
        confinement.check("Database.totalChangesCount")
        return Int(sqlite3_total_changes64(handle))
    }

    /// Whether a transaction is open (`sqlite3_get_autocommit` is off).
    public var isInsideTransaction: Bool {
        confinement.check("Database.isInsideTransaction")
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Whether the connection was opened read-only.
    public var isReadOnly: Bool {
        confinement.check("Database.isReadOnly")
        return sqlite3_db_readonly(handle, "main") == 1
    }

    /// The number of statements in the statement cache.
    public var cachedStatementCount: Int {
        confinement.check("Database.cachedStatementCount")
        return statementCache.count
    }

    /// How many statements the statement cache has finalized to stay within
    /// ``Configuration/statementCacheCapacity``: a number that keeps growing under a steady
    /// workload means the capacity is too small for it.
    public var statementCacheEvictionCount: Int {
        confinement.check("Database.statementCacheEvictionCount")
        return statementCache.evictionCount
    }

    /// Finalizes every cached statement.
    public func clearStatementCache() {
        confinement.check("Database.clearStatementCache()")
        statementCache.removeAll()
        recordStatements.removeAll()
    }

    /// Interrupts the statement running on this connection (callable from the connection's
    /// own closure, for example from a custom function; other threads use the queue's or pool's
    /// `interrupt()`).
    // Not confined: `sqlite3_interrupt` is safe from any thread (see `InterruptState`).
    public func interrupt() {
        interruptState.interruptAll()
    }

    // MARK: - Errors

    func error(code: Int32, sql: String?, arguments: StatementArguments?) -> any Error {
        if code & 0xFF == SQLITE_INTERRUPT, interruptState.isCancellationRequested {
            return CancellationError()
        }
        if code == SQLITE_CONSTRAINT | (2 << 8), let refused = refusedCommitError {
            refusedCommitError = nil
            return refused
        }
        return DatabaseError(connection: handle, code: code, sql: sql, arguments: arguments)
    }

    func checkInterruption(sql: String) throws {
        if interruptState.isCancellationRequested && !ignoresCancellation {
            throw CancellationError()
        }
    }

    /// Executes cleanup SQL (a rollback, restoring a pragma) even when the current job was
    /// cancelled. Statements refuse to start once cancellation is requested; a cleanup that did
    /// not run would leave the connection inside the cancelled job's transaction, or in
    /// query-only mode, for the next job.
    func executeIgnoringCancellation(sql: String) throws {
        let wasIgnoring = ignoresCancellation
        ignoresCancellation = true
        defer { ignoresCancellation = wasIgnoring }
        try execute(sql: sql)
    }

    /// Throws ``DatabaseAccessError`` (`.closed`) once the connection is closed: every access
    /// checks it before its closure runs, as the `sqlite3` handle is gone by then.
    func checkOpen() throws {
        if isClosed {
            throw DatabaseAccessError(.closed, "\(description) is closed")
        }
    }

    func checkOpen(sql: String) throws {
        if isClosed {
            throw DatabaseAccessError(.closed, "\(description) is closed; cannot execute `\(sql)`")
        }
    }
}
