import BenchSupport
import CSQLiteBench
import Foundation

// The floor of the write-overhead workload: the same one-row write transactions with the C
// API (prepared BEGIN IMMEDIATE, INSERT and COMMIT statements), and nothing observing.

final class SQLiteCWriteContender: WriteOverheadContender {
    let name = "sqlite-c"
    private var connection: CConnection!

    func open(path: String) throws {
        connection = try CConnection(path: path, readOnly: false)
        try connection.exec("PRAGMA journal_mode = WAL")
        for sql in ObservationSchema.createSQL { try connection.exec(sql) }
    }

    func startObservers(count: Int) throws {
        guard count == 0 else { throw BenchFailure("the C baseline has no observers") }
    }

    func reset() throws {
        for sql in ObservationSchema.resetSQL { try connection.exec(sql) }
    }

    func writeRows(count: Int) throws {
        let begin = try connection.statement("BEGIN IMMEDIATE TRANSACTION")
        let insert = try connection.statement(ObservationSchema.insertTargetSQL)
        let commit = try connection.statement("COMMIT TRANSACTION")
        for value in 0..<count {
            try connection.check(sqlite3_step(begin), "begin")
            sqlite3_reset(begin)
            sqlite3_bind_int64(insert, 1, Int64(value))
            try connection.check(sqlite3_step(insert), "insert")
            sqlite3_reset(insert)
            try connection.check(sqlite3_step(commit), "commit")
            sqlite3_reset(commit)
        }
    }

    func close() {
        connection = nil
    }
}
