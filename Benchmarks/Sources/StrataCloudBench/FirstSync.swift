import Foundation
import PostgresNIO
import StrataSQLite

/// The first sync of `rows` rows from one device to another through the service, against a raw
/// bulk insert of the same rows (the same JSON the store keeps) into PostgreSQL.
enum FirstSync {
    static func run(_ bench: CloudBench, rows: Int) async throws {
        let (phone, phoneEngine) = try bench.device("phone", user: "first")
        let (laptop, laptopEngine) = try bench.device("laptop", user: "first")
        try await phone.write { db in
            for index in 0..<rows {
                try db.execute(
                    sql: "INSERT INTO items (id, title, score) VALUES (?, ?, ?)", arguments: ["item-\(index)", "Item \(index)", index])
            }
        }
        let clock = ContinuousClock()
        let upload = try await clock.measure { try await phoneEngine.sendChanges() }
        let download = try await clock.measure { try await laptopEngine.fetchChanges() }
        let arrived = try await laptop.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0 }

        try await bench.client.query(
            "CREATE TABLE raw_rows (owner text, zone text, name text, type text, fields jsonb, PRIMARY KEY (owner, zone, name))")
        let raw = try await clock.measure {
            try await bench.client.withTransaction(logger: bench.logger) { connection in
                var start = 0
                while start < rows {
                    let end = min(rows, start + 1_000)
                    var bindings = PostgresBindings()
                    var values: [String] = []
                    for index in start..<end {
                        let base = (index - start) * 2
                        values.append("('bench', 'zone', $\(base + 1), 'items', $\(base + 2)::jsonb)")
                        bindings.append("item-\(index):items")
                        bindings.append(
                            #"{"id": {"text": {"_0": "item-\#(index)"}}, "title": {"text": {"_0": "Item \#(index)"}}, "score": {"integer": {"_0": \#(index)}}}"#
                        )
                    }
                    try await connection.query(
                        PostgresQuery(
                            unsafeSQL: "INSERT INTO raw_rows (owner, zone, name, type, fields) VALUES " + values.joined(separator: ", "),
                            binds: bindings),
                        logger: bench.logger)
                    start = end
                }
            }
        }
        let total = seconds(upload) + seconds(download)
        print(
            String(
                format:
                    "first sync, %d rows: upload %.2f s, download %.2f s, total %.2f s (%.0f rows/s); raw bulk insert %.3f s; ratio %.1fx (%d arrived)",
                rows, seconds(upload), seconds(download), total, Double(rows) / total, seconds(raw), total / seconds(raw), arrived))
    }
}
