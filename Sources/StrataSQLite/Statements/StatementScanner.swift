/// Walks the statements of an SQL text, preparing one at a time.
///
/// Preparing is lazy on purpose: a statement that names a table created by an earlier
/// statement of the same text can only be prepared once that earlier one has run. A failed
/// ``next()`` does not advance, so calling it again (after running the statements before)
/// prepares the same statement again.
struct StatementScanner {
    private let sql: String
    private let database: Database
    private let persistent: Bool
    private var utf8: [CChar]
    private var offset = 0
    private var index = 0

    /// - Parameter persistent: prepare with `SQLITE_PREPARE_PERSISTENT` and cache a statement
    ///   that is the whole text.
    /// - Throws: ``DatabaseError`` (`SQLITE_MISUSE`) when the text holds a NUL character.
    ///   SQLite stops reading at the first NUL, so in `"UPDATE t SET a = 2\0; DELETE FROM t"`
    ///   what follows the NUL would be silently dropped or, given the byte count, run: the text
    ///   is not what it seems either way, so it is refused.
    init(sql: String, database: Database, persistent: Bool) throws {
        self.sql = sql
        self.database = database
        self.persistent = persistent
        utf8 = Array(sql.utf8CString)
        if let position = utf8.dropLast().firstIndex(of: 0) {
            throw DatabaseError(
                resultCode: .misuse,
                message: "SQL contains a NUL character at byte \(position); SQLite would ignore the text after it",
                sql: sql.replacingOccurrences(of: "\u{0}", with: "\\0"))
        }
    }

    /// The next statement, prepared, or nil after the last one.
    mutating func next() throws -> Statement? {
        let total = utf8.count - 1  // without the terminating NUL
        while true {
            // Skip what follows the previous statement's semicolon, so the text of later
            // statements (in traces and error messages) starts at their first keyword rather
            // than at a newline.
            while offset < total, Self.isBlank(utf8[offset]) { offset += 1 }
            guard offset < total else { return nil }
            let start = offset
            let isFirst = index == 0
            let (database, sql, persistent) = (self.database, self.sql, self.persistent)
            let prepared = try utf8.withUnsafeBufferPointer { buffer -> (statement: Statement?, end: Int) in
                guard let base = buffer.baseAddress else { return (nil, total - start) }
                return try database.prepareStatement(
                    at: base + start, byteCount: total - start, sql: sql, persistent: persistent
                ) { consumed in
                    // Whether this statement is the whole text: only then is it cached, and
                    // described by the text as written.
                    isFirst && buffer[(start + consumed)..<total].allSatisfy(Self.isBlank)
                }
            }
            offset = start + prepared.end
            if let statement = prepared.statement {
                index += 1
                return statement
            }
        }
    }

    private static func isBlank(_ byte: CChar) -> Bool {
        switch UInt8(bitPattern: byte) {
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: ";"):
            true
        default:
            false
        }
    }
}
