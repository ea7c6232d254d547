import BenchSupport
import CSQLiteBench
import Foundation
import Logging
import StrataSQLite
import StrataSync

// The `sync` workload: what StrataSync costs, against the same work without it, in one run.
//
// - capture: 10,000 inserts in one transaction into a synced table (capture triggers log each
//   one) against an identical unsynced table of the same file, and against the C API
//   inserting into an unsynced table with one prepared statement; three interleaved rounds
//   per iteration.
// - upload: `sendChanges()` of 10,000 new rows to a MockCloud (drain, batches of 400, the
//   cloud's checks, acknowledgments), against inserting the same rows locally.
// - apply: `fetchChanges()` of 10,000 records on a second device (merge, insert, metadata),
//   against inserting the same rows locally.
// Run: swift run -c release --package-path Benchmarks strata-bench --filter sync [--quick]
// (--filter capture: the capture rows alone)

func runSyncWorkloadIfSelected(_ options: Options) async throws -> Bool {
    guard options.filters.contains(where: { "sync".contains($0) || $0 == "capture" }) else { return false }
    try await SyncWorkload(quick: options.quick, directory: options.directory, captureOnly: options.filters.contains("capture"))
        .run()
    return !options.filters.isEmpty && options.filters.allSatisfy { "sync".contains($0) || "assets".contains($0) || $0 == "capture" }
}

struct SyncWorkload {
    let quick: Bool
    let directory: String?
    /// Measures change capture alone (`--filter capture`), for profiling it.
    var captureOnly = false
    /// Errors only: the engine's info lines would be timed too, and drown the table.
    static let logger: Logger = {
        var logger = Logger(label: "strata-bench.sync")
        logger.logLevel = .error
        return logger
    }()

    static let schema = """
        CREATE TABLE IF NOT EXISTS synced (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, score INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS plain (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, score INTEGER NOT NULL);
        """

    func run() async throws {
        let rows = quick ? 2_000 : 10_000
        let iterations = quick ? 3 : 7
        let folder = (directory ?? NSTemporaryDirectory()) + "/strata-bench-sync-\(ProcessInfo.processInfo.processIdentifier)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { if directory == nil { try? FileManager.default.removeItem(atPath: folder) } }
        print("")
        print("sync — StrataSync against the same rows without sync, \(rows) rows, median of \(iterations)")
        var times: [String: [Double]] = [:]
        let clock = ContinuousClock()
        func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
        for iteration in 0..<iterations {
            let path = folder + "/sync-\(iteration).sqlite"
            let pool = try DatabasePool(path: path)
            try await pool.write { db in try db.execute(sql: Self.schema) }
            let cloud = MockCloud()
            // Installs capture on the writer; this engine never sends.
            let capturing = try SyncEngine(
                for: pool, tableNames: ["synced"], container: cloud.container(user: "bench-capture"),
                configuration: SyncEngineConfiguration(deviceID: "capture", schedule: nil), logger: Self.logger,
                startImmediately: false)
            _ = capturing
            let ids = (0..<rows).map { "row-\(iteration)-\($0)" }
            func insert(_ ids: [String], into table: String) throws {
                try pool.write { db in
                    for (index, id) in ids.enumerated() {
                        try db.execute(
                            sql: "INSERT INTO \(table) (id, name, score) VALUES (?, ?, ?)", arguments: [id, "name \(index)", index])
                    }
                }
            }
            // Three interleaved rounds per iteration: the three are compared as ratios, and
            // interleaving keeps a slow moment of the machine from landing on one of them.
            for round in 0..<3 {
                let roundIDs = ids.map { "\($0)-\(round)" }
                times["plain", default: []].append(seconds(try clock.measure { try insert(roundIDs, into: "plain") }))
                times["capture", default: []].append(seconds(try clock.measure { try insert(roundIDs, into: "synced") }))
                times["c", default: []].append(
                    seconds(try clock.measure { try Self.insertWithC(path: path, ids: roundIDs, table: "c_plain_\(round)") }))
            }
            pool.close()
            if captureOnly { continue }

            // The upload starts from a fresh file, so it sends exactly the 10,000 rows.
            let uploadPath = folder + "/sync-\(iteration)-a.sqlite"
            let source = try DatabasePool(path: uploadPath)
            try await source.write { db in try db.execute(sql: Self.schema) }
            let engine = try SyncEngine(
                for: source, tableNames: ["synced"], container: cloud.container(user: "bench"),
                configuration: SyncEngineConfiguration(deviceID: "a", schedule: nil), logger: Self.logger,
                startImmediately: false)
            try await source.write { db in
                for (index, id) in ids.enumerated() {
                    try db.execute(sql: "INSERT INTO synced (id, name, score) VALUES (?, ?, ?)", arguments: [id, "name \(index)", index])
                }
            }
            let upload = try await clock.measure { try await engine.sendChanges() }
            times["upload", default: []].append(seconds(upload))

            let secondPath = folder + "/sync-\(iteration)-b.sqlite"
            let second = try DatabasePool(path: secondPath)
            try await second.write { db in try db.execute(sql: Self.schema) }
            let receiver = try SyncEngine(
                for: second, tableNames: ["synced"], container: cloud.container(user: "bench"),
                configuration: SyncEngineConfiguration(deviceID: "b", fetchPageSize: 400, schedule: nil), logger: Self.logger,
                startImmediately: false)
            let apply = try await clock.measure { try await receiver.fetchChanges() }
            times["apply", default: []].append(seconds(apply))
            let count = try await second.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM synced") }
            guard count == rows else { throw BenchFailure("the receiving device has \(count ?? 0) rows, not \(rows)") }
            second.close()
            source.close()
            for file in [path, uploadPath, secondPath] {
                for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: file + suffix) }
            }
        }
        func median(_ name: String) -> Double {
            let sorted = (times[name] ?? []).sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        let plain = median("plain")
        func line(_ label: String, _ name: String) {
            let value = median(name)
            print(
                String(
                    format: "  %-44@ %9.2f ms   %5.2fx plain   %5.2fx sqlite-c", label as NSString, value * 1000, value / plain,
                    value / median("c")))
        }
        line("sqlite-c insert (unsynced table)", "c")
        line("strata insert (unsynced table)", "plain")
        line("strata insert (synced table, captured)", "capture")
        guard !captureOnly else { return }
        line("first upload to MockCloud (sendChanges)", "upload")
        line("applying incoming records (fetchChanges)", "apply")
    }

    /// The C API baseline: one prepared statement, one transaction, into a fresh plain table.
    static func insertWithC(path: String, ids: [String], table: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK, let handle else {
            throw BenchFailure("sqlite3_open_v2 failed for \(path)")
        }
        defer { sqlite3_close_v2(handle) }
        sqlite3_exec(
            handle, "CREATE TABLE \(table) (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, score INTEGER NOT NULL); BEGIN", nil, nil, nil
        )
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, "INSERT INTO \(table) (id, name, score) VALUES (?, ?, ?)", -1, &statement, nil)
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, id) in ids.enumerated() {
            sqlite3_bind_text(statement, 1, id, -1, transient)
            sqlite3_bind_text(statement, 2, "name \(index)", -1, transient)
            sqlite3_bind_int64(statement, 3, Int64(index))
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchFailure("insert failed") }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        sqlite3_exec(handle, "COMMIT", nil, nil, nil)
    }
}
