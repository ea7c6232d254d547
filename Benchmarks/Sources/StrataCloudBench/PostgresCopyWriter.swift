import BenchSupport
import Foundation
import Logging
import PostgresNIO

/// The PostgreSQL side of the raw bulk load: the same rows into two plain relational tables
/// of the same shape (foreign key included) with `COPY ... FROM STDIN` in text format,
/// through postgres-nio's `PostgresConnection.copyFrom`: the fastest way in.
enum PostgresCopyWriter {
    static func createTables(_ client: PostgresClient, suffix: String, logger: Logger) async throws {
        _ = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE TABLE raw_projects_\(suffix) (id text PRIMARY KEY, name text NOT NULL, code bigint NOT NULL,
                        budget double precision NOT NULL, created_at bigint NOT NULL, archived bigint NOT NULL, color bytea NOT NULL,
                        note text, rating double precision, tag text)
                    """), logger: logger)
        _ = try await client.query(
            PostgresQuery(
                unsafeSQL: """
                    CREATE TABLE raw_tasks_\(suffix) (id text PRIMARY KEY,
                        project_id text NOT NULL REFERENCES raw_projects_\(suffix) (id) ON DELETE CASCADE, title text NOT NULL,
                        position bigint NOT NULL, amount double precision NOT NULL, done bigint NOT NULL, payload bytea NOT NULL,
                        comment text, due_at bigint, weight double precision)
                    """), logger: logger)
    }

    /// Copies `rows` rows of run `key`: the projects first (the tasks reference them), each
    /// table in one COPY, sent in buffers of about 1,000 rows.
    static func copy(rows: Int, key: String, suffix: String, client: PostgresClient, logger: Logger) async throws {
        try await client.withConnection { connection in
            for (table, columns, wantsProjects) in [
                ("raw_projects_\(suffix)", BenchRows.projectColumns, true), ("raw_tasks_\(suffix)", BenchRows.taskColumns, false),
            ] {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    var buffer = ByteBuffer()
                    var pending = 0
                    for index in 0..<rows where BenchRows.isProject(index) == wantsProjects {
                        appendLine(BenchRows.row(index, key: key).values, to: &buffer)
                        pending += 1
                        if pending == 1_000 {
                            try await writer.write(buffer)
                            buffer.clear()
                            pending = 0
                        }
                    }
                    if pending > 0 { try await writer.write(buffer) }
                }
            }
        }
    }

    /// Rows in both tables, to check the copy.
    static func count(_ client: PostgresClient, suffix: String, logger: Logger) async throws -> Int {
        let rows = try await client.query(
            PostgresQuery(unsafeSQL: "SELECT (SELECT count(*) FROM raw_projects_\(suffix)) + (SELECT count(*) FROM raw_tasks_\(suffix))"),
            logger: logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// One row in COPY's text format: tab-separated, `\N` for NULL, bytea as `\\x` and hex.
    static func appendLine(_ values: [BenchValue], to buffer: inout ByteBuffer) {
        for (offset, value) in values.enumerated() {
            if offset > 0 { buffer.writeStaticString("\t") }
            switch value {
            case .text(let text): buffer.writeString(escaped(text))
            case .integer(let integer): buffer.writeString(String(integer))
            case .real(let real): buffer.writeString(String(real))
            case .blob(let bytes):
                buffer.writeStaticString("\\\\x")
                for byte in bytes {
                    buffer.writeInteger(hexDigits[Int(byte >> 4)])
                    buffer.writeInteger(hexDigits[Int(byte & 0x0F)])
                }
            case .null: buffer.writeStaticString("\\N")
            }
        }
        buffer.writeStaticString("\n")
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// COPY's text format gives backslash, tab, newline and carriage return a meaning.
    private static func escaped(_ text: String) -> String {
        guard text.contains(where: { $0 == "\\" || $0 == "\t" || $0 == "\n" || $0 == "\r" }) else { return text }
        return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\t", with: "\\t")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
    }
}
