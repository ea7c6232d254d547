import CSQLite

/// An error reported by SQLite, with everything needed to understand it: the primary and extended
/// result codes, SQLite's message, and the SQL and arguments that were executing.
///
/// Its description prints all of that:
/// `SQLite error 19 (SQLITE_CONSTRAINT_UNIQUE, 2067): UNIQUE constraint failed: players.id — while executing INSERT INTO "players" … with arguments [1, 'Blob']`
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The extended result code (equal to ``resultCode`` when SQLite gave no extended code).
    public var extendedResultCode: ResultCode
    /// SQLite's message (`sqlite3_errmsg`), or Strata's when the error did not come from SQLite.
    public var message: String
    /// The SQL that was executing, when there was one.
    public var sql: String?
    /// The arguments bound to that SQL.
    public var arguments: StatementArguments?

    /// The primary result code (`SQLITE_CONSTRAINT`, `SQLITE_BUSY`, …).
    public var resultCode: ResultCode { extendedResultCode.primary }

    /// An error with SQLite's code (extended when known), its message and the statement it concerns.
    public init(resultCode: ResultCode, message: String, sql: String? = nil, arguments: StatementArguments? = nil) {
        self.extendedResultCode = resultCode
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    /// Reads the error of a connection after a failing call.
    init(connection: OpaquePointer?, code: Int32, sql: String? = nil, arguments: StatementArguments? = nil) {
        let extended = connection.map { sqlite3_extended_errcode($0) } ?? code
        // The extended code only describes `code` when its primary part matches; a failing
        // sqlite3_open or a misuse can leave an unrelated one behind.
        let resultCode = (extended & 0xFF) == (code & 0xFF) ? extended : code
        let message =
            connection.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
            ?? String(cString: sqlite3_errstr(code))
        self.init(resultCode: ResultCode(rawValue: resultCode), message: message, sql: sql, arguments: arguments)
    }

    /// The code, the message and the SQL with its arguments, on one line.
    public var description: String {
        var text = "SQLite error \(resultCode.rawValue)"
        if extendedResultCode != resultCode {
            text += " (extended \(extendedResultCode.rawValue))"
        }
        text += ": \(message)"
        if let sql {
            text += " — while executing `\(sql)`"
        }
        if let arguments, !arguments.isEmpty {
            text += " with arguments \(arguments)"
        }
        return text
    }
}

extension DatabaseError: Equatable {
    /// Equal when the code, the message and the SQL are; arguments are not compared.
    public static func == (lhs: DatabaseError, rhs: DatabaseError) -> Bool {
        lhs.extendedResultCode == rhs.extendedResultCode && lhs.message == rhs.message && lhs.sql == rhs.sql
    }
}

/// Matches errors by primary result code: `catch let error as DatabaseError where error ~= .constraint`.
public func ~= (code: ResultCode, error: any Error) -> Bool {
    guard let error = error as? DatabaseError else { return false }
    return error.resultCode == code || error.extendedResultCode == code
}
