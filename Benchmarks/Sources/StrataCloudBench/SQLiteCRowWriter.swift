import BenchSupport
import CSQLiteBench
import Foundation

/// The SQLite side of the raw bulk load: the same rows inserted through the C API with one
/// prepared statement per table, in one transaction, into a fresh file (the pattern of
/// strata-bench's `SyncWorkload.insertWithC`).
enum SQLiteCRowWriter {
    static func insert(rows: Int, key: String, path: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK, let handle else {
            throw BenchFailure("sqlite3_open_v2 failed for \(path)")
        }
        defer { sqlite3_close_v2(handle) }
        // WAL and foreign keys checked, as a Strata pool; synchronous NORMAL where a Strata pool keeps
        // SQLite's FULL (one commit here: one fsync more or less).
        try exec(handle, "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON")
        try exec(handle, BenchRows.schema())
        try exec(handle, "BEGIN")
        let projects = try prepare(handle, StrataRowWriter.insertSQL(table: "projects", columns: BenchRows.projectColumns))
        let tasks = try prepare(handle, StrataRowWriter.insertSQL(table: "tasks", columns: BenchRows.taskColumns))
        defer {
            sqlite3_finalize(projects)
            sqlite3_finalize(tasks)
        }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for index in 0..<rows {
            let row = BenchRows.row(index, key: key)
            let statement = row.table == "projects" ? projects : tasks
            for (offset, value) in row.values.enumerated() {
                let position = Int32(offset + 1)
                switch value {
                case .text(let text): sqlite3_bind_text(statement, position, text, -1, transient)
                case .integer(let integer): sqlite3_bind_int64(statement, position, integer)
                case .real(let real): sqlite3_bind_double(statement, position, real)
                case .blob(let bytes):
                    _ = bytes.withUnsafeBytes { sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), transient) }
                case .null: sqlite3_bind_null(statement, position)
                }
            }
            guard sqlite3_step(statement) == SQLITE_DONE else {
                throw BenchFailure("insert failed: \(String(cString: sqlite3_errmsg(handle)))")
            }
            sqlite3_reset(statement)
        }
        try exec(handle, "COMMIT")
    }

    private static func exec(_ handle: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchFailure("\(sql.prefix(40))…: \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    private static func prepare(_ handle: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchFailure("prepare failed: \(String(cString: sqlite3_errmsg(handle)))")
        }
        return statement
    }
}
