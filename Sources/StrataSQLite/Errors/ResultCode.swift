import CSQLite

/// A SQLite result code, primary (`SQLITE_CONSTRAINT`) or extended (`SQLITE_CONSTRAINT_UNIQUE`).
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The code as SQLite returns it.
    public var rawValue: Int32
    /// Wraps a code SQLite returned.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code of an extended code (its low 8 bits).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xFF) }

    /// SQLite's English explanation of the code.
    public var explanation: String { String(cString: sqlite3_errstr(rawValue)) }

    /// The number and SQLite's explanation, as `19 (constraint failed)`.
    public var description: String { "\(rawValue) (\(explanation))" }

    /// Success (`SQLITE_OK`).
    public static let ok = ResultCode(rawValue: SQLITE_OK)
    /// A generic error, such as an SQL syntax error or a missing table (`SQLITE_ERROR`).
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    /// An internal malfunction of SQLite (`SQLITE_INTERNAL`).
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    /// The requested access mode cannot be provided (`SQLITE_PERM`).
    public static let permission = ResultCode(rawValue: SQLITE_PERM)
    /// An operation was aborted, often by `RAISE(ABORT)` in a trigger (`SQLITE_ABORT`).
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    /// The file is locked by another connection and the busy timeout ran out (`SQLITE_BUSY`).
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    /// A conflict inside this connection, such as dropping a table a statement reads (`SQLITE_LOCKED`).
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    /// SQLite could not allocate memory (`SQLITE_NOMEM`).
    public static let noMemory = ResultCode(rawValue: SQLITE_NOMEM)
    /// A write to a read-only database or connection (`SQLITE_READONLY`).
    public static let readOnly = ResultCode(rawValue: SQLITE_READONLY)
    /// The statement was interrupted, as by cancellation (`SQLITE_INTERRUPT`).
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    /// The operating system reported an I/O error (`SQLITE_IOERR`).
    public static let ioError = ResultCode(rawValue: SQLITE_IOERR)
    /// The database file is damaged (`SQLITE_CORRUPT`).
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    /// The disk is full (`SQLITE_FULL`).
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    /// The file could not be opened (`SQLITE_CANTOPEN`).
    public static let cannotOpen = ResultCode(rawValue: SQLITE_CANTOPEN)
    /// The schema changed while a statement was prepared (`SQLITE_SCHEMA`).
    public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
    /// A string or blob is larger than SQLite allows (`SQLITE_TOOBIG`).
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    /// A constraint was violated (`SQLITE_CONSTRAINT`); the extended codes below say which kind.
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    /// A value of the wrong type, as a non-integer rowid (`SQLITE_MISMATCH`).
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    /// The API was used wrongly, as SQL text containing NUL (`SQLITE_MISUSE`).
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    /// A parameter index out of range (`SQLITE_RANGE`).
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    /// The file is not a SQLite database (`SQLITE_NOTADB`).
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)

    /// A UNIQUE constraint failed (`SQLITE_CONSTRAINT_UNIQUE`).
    public static let constraintUnique = ResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
    /// A PRIMARY KEY constraint failed (`SQLITE_CONSTRAINT_PRIMARYKEY`).
    public static let constraintPrimaryKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    /// A FOREIGN KEY constraint failed (`SQLITE_CONSTRAINT_FOREIGNKEY`).
    public static let constraintForeignKey = ResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
    /// A NOT NULL constraint failed (`SQLITE_CONSTRAINT_NOTNULL`).
    public static let constraintNotNull = ResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    /// A CHECK constraint failed (`SQLITE_CONSTRAINT_CHECK`).
    public static let constraintCheck = ResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
}
