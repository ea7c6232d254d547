import BenchSupport
import Foundation
import SQLiteNIO

// Vapor's SQLiteNIO 1.13.2 as its README and tests use it: `SQLiteConnection.open(storage:
// .file(path:))` on the library's default NIOThreadPool and event loop group, then
// `query(_:_:)` with `[SQLiteData]` binds, each returned `SQLiteRow` decoded by index through
// the library's own `SQLiteDataConvertible` conversions into the C baseline's plain struct.
//
// What this measures besides the Swift layer:
// - A different SQLite. SQLiteNIO does not link the system library (3.40.1 here, which sqlite-c,
//   Strata and GRDB share): it compiles its own amalgamation, SQLite 3.54.1 (target
//   VaporCSQLite, built by SwiftPM's clang at -O2 in release), with its own options. Those that
//   bear on speed: SQLITE_DEFAULT_MEMSTATUS=0 (no global allocation statistics, hence no mutex
//   around every malloc), the lookaside allocator left on (the Debian build sets
//   SQLITE_OMIT_LOOKASIDE), SQLITE_OMIT_SHARED_CACHE, SQLITE_OMIT_PROGRESS_CALLBACK and
//   SQLITE_OMIT_TRACE (fewer checks in the VDBE loop and around each statement),
//   SQLITE_THREADSAFE=1 with every connection opened SQLITE_OPEN_FULLMUTEX (a mutex around each
//   API call, like GRDB's connections, which get the build's serialized default, where sqlite-c
//   and Strata open NOMUTEX ones), and SQLITE_SECURE_DELETE (as in the Debian build). Its ratio to sqlite-c therefore also measures a newer, differently compiled
//   SQLite, mostly in its favour.
// - Its design: every query is prepared, run and finalized anew (it has no statement cache),
//   on a thread of NIOThreadPool.singleton (as many threads as cores), and each row is first
//   built as an array of `SQLiteData` enums. The harness calls it through `blockingAwait`.
//
// Each workload has a natural equivalent: transactions are BEGIN / COMMIT queries on the
// connection, and the concurrent readers are one connection each, as the C baseline's are.

extension CItem {
    /// Decodes a row of `Schema.selectAllSQL`'s columns, by position.
    init(nioRow row: SQLiteRow) throws {
        let columns = row.columns
        guard columns.count == Schema.columns.count else {
            throw BenchFailure("sqlite-nio: \(columns.count) columns, expected \(Schema.columns.count)")
        }
        id = try nioValue(columns[0].data)
        i1 = try nioValue(columns[1].data)
        i2 = try nioValue(columns[2].data)
        i3 = try nioValue(columns[3].data)
        d1 = try nioValue(columns[4].data)
        d2 = try nioValue(columns[5].data)
        t1 = try nioValue(columns[6].data)
        t2 = try nioValue(columns[7].data)
        t3 = try nioValue(columns[8].data)
        b1 = try nioValue(columns[9].data)
    }

    /// The non-key columns in `Schema.columns` order.
    func nioValues() throws -> [SQLiteData] {
        guard let blob = b1.sqliteData else { throw BenchFailure("sqlite-nio: no SQLiteData for a blob") }
        return [
            .integer(SQLiteInt64(i1)), .integer(SQLiteInt64(i2)), .integer(SQLiteInt64(i3)),
            .float(d1), .float(d2), .text(t1), .text(t2), .text(t3), blob,
        ]
    }
}

@inline(__always)
private func nioValue<T: SQLiteDataConvertible>(_ data: SQLiteData) throws -> T {
    guard let value = T(sqliteData: data) else { throw BenchFailure("sqlite-nio: cannot read \(T.self) from \(data)") }
    return value
}

/// Runs `body` between `begin` and COMMIT, rolling back if it throws.
private func nioTransaction<T: Sendable>(
    _ connection: SQLiteConnection, _ begin: String, _ body: () async throws -> T
) async throws -> T {
    _ = try await connection.query(begin)
    do {
        let result = try await body()
        _ = try await connection.query("COMMIT")
        return result
    } catch {
        _ = try? await connection.query("ROLLBACK")
        throw error
    }
}

/// The connection's changes so far: SQLiteNIO exposes no `sqlite3_changes`, and one query
/// before and after a loop costs less than one per statement.
private func nioTotalChanges(_ connection: SQLiteConnection) async throws -> Int {
    guard let count = try await connection.query("SELECT total_changes()").first?.columns.first?.data.integer else {
        throw BenchFailure("sqlite-nio: total_changes() returned nothing")
    }
    return count
}

/// The SQLite that SQLiteNIO compiles in, for the report.
func sqliteNIOVersion() -> String {
    SQLiteConnection.libraryVersionString()
}

final class SQLiteNIOContender: Contender {
    let name = "sqlite-nio"
    private var path = ""
    private var connection: SQLiteConnection?
    private var readers: [SQLiteConnection] = []
    private var items: [CItem] = []

    private static func connect(path: String) throws -> SQLiteConnection {
        try blockingAwait {
            let connection = try await SQLiteConnection.open(storage: .file(path: path))
            do {
                // The settings every contender has. The busy timeout also replaces SQLiteNIO's
                // default busy handler, which retries at once, forever: a spinning reader would
                // take one of the two cores while it waits.
                for pragma in [
                    "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL",
                    "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 5000",
                ] {
                    _ = try await connection.query(pragma)
                }
            } catch {
                try? await connection.close()
                throw error
            }
            return connection
        }
    }

    private func writer() throws -> SQLiteConnection {
        guard let connection else { throw BenchFailure("sqlite-nio: not open") }
        return connection
    }

    private func reader(_ index: Int) throws -> SQLiteConnection {
        while readers.count <= index {
            readers.append(try Self.connect(path: path))
        }
        return readers[index]
    }

    func open(path: String) throws {
        self.path = path
        connection = try Self.connect(path: path)
    }

    func close() {
        for connection in readers + (connection.map { [$0] } ?? []) {
            _ = try? blockingAwait { try await connection.close() }
        }
        readers = []
        connection = nil
        items = []
    }

    func executeUntimed(_ statements: [String]) throws {
        let connection = try writer()
        try blockingAwait {
            for sql in statements { _ = try await connection.query(sql) }
        }
    }

    func load(_ rows: [SourceRow]) {
        items = rows.map(CItem.init)
    }

    func fetchAll() throws -> Int {
        let connection = try writer()
        let items = try blockingAwait {
            try await connection.query(Schema.selectAllSQL).map { try CItem(nioRow: $0) }
        }
        var sum = 0
        for item in items { sum &+= item.checksum }
        return sum
    }

    func insertAll() throws -> Int {
        let connection = try writer()
        let items = self.items
        try blockingAwait {
            try await nioTransaction(connection, "BEGIN IMMEDIATE") {
                for item in items {
                    _ = try await connection.query(Schema.insertSQL, [.integer(SQLiteInt64(item.id))] + item.nioValues())
                }
            }
        }
        return items.count
    }

    func fetchByKey(_ keys: [Int64]) throws -> Int {
        let connection = try writer()
        return try blockingAwait {
            try await nioTransaction(connection, "BEGIN DEFERRED") {
                var sum = 0
                for key in keys {
                    if let row = try await connection.query(Schema.selectByKeySQL, [.integer(SQLiteInt64(key))]).first {
                        sum &+= try CItem(nioRow: row).checksum
                    }
                }
                return sum
            }
        }
    }

    func updateByKey() throws -> Int {
        let connection = try writer()
        let items = self.items
        return try blockingAwait {
            try await nioTransaction(connection, "BEGIN IMMEDIATE") {
                let before = try await nioTotalChanges(connection)
                for item in items {
                    _ = try await connection.query(Schema.updateByKeySQL, try item.nioValues() + [.integer(SQLiteInt64(item.id))])
                }
                return try await nioTotalChanges(connection) - before
            }
        }
    }

    func deleteByKey(_ keys: [Int64]) throws -> Int {
        let connection = try writer()
        return try blockingAwait {
            try await nioTransaction(connection, "BEGIN IMMEDIATE") {
                let before = try await nioTotalChanges(connection)
                for key in keys {
                    _ = try await connection.query(Schema.deleteByKeySQL, [.integer(SQLiteInt64(key))])
                }
                return try await nioTotalChanges(connection) - before
            }
        }
    }

    func concurrentReads(tasks: Int, readsPerTask: Int, rowCount: Int) throws -> Int {
        let writer = try writer()
        let connections = try (0..<tasks).map { try reader($0) }
        let control = WriterControl()
        // Autocommit: the UPDATE alone is the one-row transaction the other writers commit.
        control.start(
            { key in
                try blockingAwait { _ = try await writer.query(Schema.touchSQL, [.integer(SQLiteInt64(key))]) }
            }, keyCount: rowCount)
        let result = Result {
            try blockingAwait {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for connection in connections {
                        group.addTask {
                            var rows = 0
                            for _ in 0..<readsPerTask {
                                rows += try await connection.query(Schema.selectAllSQL).map { try CItem(nioRow: $0) }.count
                            }
                            return rows
                        }
                    }
                    return try await group.reduce(0, +)
                }
            }
        }
        try control.stop()
        control.logCommits(name)
        return try result.get()
    }
}
