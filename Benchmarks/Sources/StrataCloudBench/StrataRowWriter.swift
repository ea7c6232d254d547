import Foundation
import StrataSQLite

/// Writes `BenchRows` through Strata, the way an app would: `execute(sql:arguments:)` in
/// write transactions (the statement cache keeps each INSERT prepared).
enum StrataRowWriter {
    static func insertSQL(table: String, columns: [String]) -> String {
        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))"
    }

    /// Rows `range` of run `key` into the tables named with `prefix`, in this transaction.
    static func insert(_ range: Range<Int>, key: String, prefix: String = "", in db: Database) throws {
        let projectSQL = insertSQL(table: prefix + "projects", columns: BenchRows.projectColumns)
        let taskSQL = insertSQL(table: prefix + "tasks", columns: BenchRows.taskColumns)
        for index in range {
            let row = BenchRows.row(index, key: key)
            try db.execute(
                sql: row.table == "projects" ? projectSQL : taskSQL, arguments: StatementArguments(row.values.map(databaseValue)))
        }
    }

    /// `rows` rows of run `key`, in transactions of 50,000 rows so that a million rows never sit
    /// in one transaction's memory.
    static func insert(rows: Int, key: String, prefix: String = "", into writer: any DatabaseWriter) async throws {
        for start in stride(from: 0, to: rows, by: 50_000) {
            let range = start..<min(rows, start + 50_000)
            try await writer.write { db in try insert(range, key: key, prefix: prefix, in: db) }
        }
    }

    /// The rows of both tables (named with `prefix`) in this database.
    static func count(prefix: String = "", in reader: any DatabaseReader) async throws -> Int {
        try await reader.read { db in
            try Int.fetchOne(db, sql: "SELECT (SELECT count(*) FROM \(prefix)projects) + (SELECT count(*) FROM \(prefix)tasks)") ?? 0
        }
    }

    static func databaseValue(_ value: BenchValue) -> any DatabaseValueConvertible {
        switch value {
        case .text(let text): text
        case .integer(let integer): integer
        case .real(let real): real
        case .blob(let bytes): Data(bytes)
        case .null: DatabaseValue.null
        }
    }
}
