import CSQLite
import Foundation

/// One SQLite connection.
///
/// A `Database` is confined to the executor of the queue or pool that owns it: you receive one
/// as the argument of `read`, `write` and their variants, and it must not escape that closure.
public final class Database {
    /// The underlying `sqlite3` connection, for calls Strata does not wrap.
    public let handle: OpaquePointer
    /// The configuration the connection was opened with.
    public let configuration: Configuration
    /// A name for traces and errors: the configuration's label and the connection's role.
    public let description: String
    /// The kind of transaction `inTransaction` and writes begin by default.
    public internal(set) var defaultTransactionKind: TransactionKind

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
    var traceBoxStorage: Unmanaged<TraceBox>?
    private var isClosed = false

    /// Opens a connection.
    ///
    /// - Parameters:
    ///   - path: a file path, `":memory:"`, or a `file:` URI.
    ///   - readOnly: open with `SQLITE_OPEN_READONLY`.
    init(path: String, configuration: Configuration, readOnly: Bool, role: String) throws {
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
        self.description = (configuration.label ?? "database") + "." + role
        self.defaultTransactionKind = readOnly ? .deferred : .immediate
        self.statementCache = StatementCache(capacity: configuration.statementCacheCapacity)
        self.interruptState = InterruptState(handle: connection)
        sqlite3_extended_result_codes(connection, 1)
        installAuthorizer()
        do {
            let milliseconds = configuration.busyTimeout.components.seconds * 1000
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
        if changeTracker != nil {
            ChangeTracker.uninstall(from: handle)
            changeTracker = nil
        }
        // close_v2 defers the real close until statements still held elsewhere are finalized,
        // instead of failing with SQLITE_BUSY.
        sqlite3_close_v2(handle)
        traceBoxStorage?.release()
        traceBoxStorage = nil
    }

    // MARK: - Executing

    /// Executes one or more statements separated by semicolons.
    ///
    /// Positional arguments are consumed statement by statement, in order. A single statement
    /// is kept in the statement cache, so repeating the same SQL does not prepare it again.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        if let statement = statementCache.statement(for: sql), !statement.isBusy {
            try statement.execute(arguments: arguments)
            return
        }
        var remaining = arguments.positional[...]
        try forEachStatement(in: sql, cacheSingleStatement: true) { statement, isOnly in
            if isOnly {
                remaining = []
                try statement.execute(arguments: arguments)
                return
            }
            let count = Int(sqlite3_bind_parameter_count(statement.handle))
            var slice = StatementArguments(Array(remaining.prefix(count)))
            slice.named = arguments.named
            slice.ignoresUnknownNames = true
            remaining = remaining.dropFirst(count)
            try statement.execute(arguments: slice)
        }
        if !remaining.isEmpty {
            throw DatabaseError(
                resultCode: .range,
                message: "wrong number of arguments: \(remaining.count) argument(s) left unused",
                sql: sql, arguments: arguments)
        }
    }

    /// Executes SQL written with interpolated values: `db.execute("DELETE FROM players WHERE id = \(id)")`.
    public func execute(_ sql: SQL) throws {
        try execute(sql: sql.text, arguments: sql.statementArguments)
    }

    /// Prepares a statement that is not cached: yours to keep and reuse within this connection.
    public func makeStatement(sql: String) throws -> Statement {
        var result: Statement?
        try forEachStatement(in: sql, cacheSingleStatement: false) { statement, _ in
            guard result == nil else {
                throw DatabaseError(resultCode: .misuse, message: "makeStatement expects a single statement, got several", sql: sql)
            }
            result = statement
        }
        guard let result else {
            throw DatabaseError(resultCode: .misuse, message: "no SQL statement to prepare", sql: sql)
        }
        return result
    }

    /// Returns the cached prepared statement for this SQL, preparing and caching it on first use.
    public func cachedStatement(sql: String) throws -> Statement {
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

    /// Prepares each statement of `sql` in turn. `isOnly` tells the body that the statement is
    /// the whole of the SQL text.
    private func forEachStatement(
        in sql: String, cacheSingleStatement: Bool, _ body: (Statement, _ isOnly: Bool) throws -> Void
    ) throws {
        try checkOpen(sql: sql)
        var utf8 = Array(sql.utf8CString)
        let total = utf8.count - 1  // without the terminating NUL
        var offset = 0
        var index = 0
        try utf8.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            while offset < total {
                // Skip what follows the previous statement's semicolon, so the text of later
                // statements (in traces and error messages) starts at their first keyword
                // rather than at a newline.
                while offset < total, Self.isBlank(base + offset, count: 1) { offset += 1 }
                guard offset < total else { break }
                let start = base + offset
                var statementHandle: OpaquePointer?
                var tail: UnsafePointer<CChar>?
                let flags = UInt32(cacheSingleStatement ? SQLITE_PREPARE_PERSISTENT : 0)
                preparingRegion = DatabaseRegion()
                if changeTracker != nil { preparingWrites = [] }
                let code = sqlite3_prepare_v3(handle, start, Int32(total - offset), flags, &statementHandle, &tail)
                let readRegion = preparingRegion ?? DatabaseRegion()
                preparingRegion = nil
                let writtenTables = preparingWrites ?? []
                preparingWrites = nil
                guard code == SQLITE_OK else {
                    throw error(code: code, sql: sql, arguments: nil)
                }
                let consumed = tail.map { $0 - UnsafePointer(start) } ?? (total - offset)
                offset += max(consumed, 1)
                guard let statementHandle else { continue }  // only whitespace or a comment
                let isOnly = index == 0 && Self.isBlank(base + offset, count: total - offset)
                let text = isOnly ? sql : String(cString: sqlite3_sql(statementHandle))
                let statement = Statement(handle: statementHandle, sql: text, database: self)
                statement.readRegion = readRegion
                statement.writtenTables = writtenTables
                if isOnly && cacheSingleStatement {
                    statementCache.insert(statement, for: sql)
                }
                index += 1
                try body(statement, isOnly)
            }
        }
    }

    private static func isBlank(_ pointer: UnsafeMutablePointer<CChar>, count: Int) -> Bool {
        for offset in 0..<max(count, 0) {
            switch UInt8(bitPattern: pointer[offset]) {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: ";"):
                continue
            default:
                return false
            }
        }
        return true
    }

    // MARK: - State

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changesCount: Int { Int(sqlite3_changes64(handle)) }

    /// Rows changed since the connection opened.
    public var totalChangesCount: Int { Int(sqlite3_total_changes64(handle)) }

    /// Whether a transaction is open (`sqlite3_get_autocommit` is off).
    public var isInsideTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    /// Whether the connection was opened read-only.
    public var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// The number of statements in the statement cache.
    public var cachedStatementCount: Int { statementCache.count }

    /// How many statements the statement cache has finalized to stay within
    /// ``Configuration/statementCacheCapacity``: a number that keeps growing under a steady
    /// workload means the capacity is too small for it.
    public var statementCacheEvictionCount: Int { statementCache.evictionCount }

    /// Finalizes every cached statement.
    public func clearStatementCache() {
        statementCache.removeAll()
        recordStatements.removeAll()
    }

    /// Interrupts the statement running on this connection (callable from the connection's
    /// own closure, for example from a custom function; other threads use the queue's or pool's
    /// `interrupt()`).
    public func interrupt() {
        interruptState.interruptAll()
    }

    // MARK: - Errors

    func error(code: Int32, sql: String?, arguments: StatementArguments?) -> any Error {
        if code & 0xFF == SQLITE_INTERRUPT, interruptState.isCancellationRequested {
            return CancellationError()
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

    private func checkOpen(sql: String) throws {
        if isClosed {
            throw DatabaseAccessError(.closed, "\(description) is closed; cannot execute `\(sql)`")
        }
    }
}
