import BenchSupport
import CSQLiteBench
import Foundation

// The baseline: a hand-written loop over SQLite's C API. Statements are prepared once and
// reused (reset, bind, step, column_*), values are read by index, and records are built exactly
// as a careful programmer would by hand.

private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

struct CItem {
    var id: Int64
    var i1: Int64
    var i2: Int64
    var i3: Int64
    var d1: Double
    var d2: Double
    var t1: String
    var t2: String
    var t3: String
    var b1: Data

    init(_ row: SourceRow) {
        id = row.id; i1 = row.i1; i2 = row.i2; i3 = row.i3; d1 = row.d1; d2 = row.d2
        t1 = row.t1; t2 = row.t2; t3 = row.t3; b1 = row.b1
    }

    /// Reads the current row of `statement`, whose columns are in `Schema.columns` order.
    @inline(__always)
    init(statement s: OpaquePointer) {
        id = sqlite3_column_int64(s, 0)
        i1 = sqlite3_column_int64(s, 1)
        i2 = sqlite3_column_int64(s, 2)
        i3 = sqlite3_column_int64(s, 3)
        d1 = sqlite3_column_double(s, 4)
        d2 = sqlite3_column_double(s, 5)
        t1 = columnText(s, 6)
        t2 = columnText(s, 7)
        t3 = columnText(s, 8)
        let bytes = sqlite3_column_blob(s, 9)
        let count = Int(sqlite3_column_bytes(s, 9))
        b1 = count > 0 && bytes != nil ? Data(bytes: bytes!, count: count) : Data()
    }

    var checksum: Int { StrataBench.checksum(id: id, i1: i1, d1: d1, t1: t1, t3: t3, b1: b1) }
}

@inline(__always)
private func columnText(_ s: OpaquePointer, _ index: Int32) -> String {
    guard let text = sqlite3_column_text(s, index) else { return "" }
    return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(s, index))), as: UTF8.self)
}

@inline(__always)
private func bindText(_ s: OpaquePointer, _ index: Int32, _ text: String) -> Int32 {
    var text = text
    return text.withUTF8 { buffer in
        guard let base = buffer.baseAddress else { return sqlite3_bind_text(s, index, "", 0, transient) }
        return sqlite3_bind_text(s, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(buffer.count), transient)
    }
}

@inline(__always)
private func bindBlob(_ s: OpaquePointer, _ index: Int32, _ data: Data) -> Int32 {
    data.withUnsafeBytes { buffer in
        sqlite3_bind_blob(s, index, buffer.baseAddress, Int32(buffer.count), transient)
    }
}

/// A connection with its prepared statements.
final class CConnection: @unchecked Sendable {
    let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    init(path: String, readOnly: Bool) throws {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
            throw BenchFailure("sqlite3_open_v2 failed for \(path)")
        }
        db = handle
        sqlite3_busy_timeout(db, 5000)
        // The same settings the libraries apply.
        try exec("PRAGMA foreign_keys = ON")
        try exec("PRAGMA synchronous = NORMAL")
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    func exec(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(db, sql, nil, nil, &message)
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "code \(code)"
            sqlite3_free(message)
            throw BenchFailure("\(sql): \(text)")
        }
    }

    /// Prepared once per connection, then reused.
    func statement(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK, let statement else {
            throw BenchFailure("prepare \(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        statements[sql] = statement
        return statement
    }

    func check(_ code: Int32, _ what: String) throws {
        if code != SQLITE_OK && code != SQLITE_DONE && code != SQLITE_ROW {
            throw BenchFailure("\(what): \(String(cString: sqlite3_errmsg(db))) (\(code))")
        }
    }

    /// Binds every column but the key to parameters 1...9 and the key to `keyIndex`.
    @inline(__always)
    func bind(_ item: CItem, to s: OpaquePointer, idIndex: Int32, firstValueIndex: Int32) throws {
        var rc = sqlite3_bind_int64(s, idIndex, item.id)
        let f = firstValueIndex
        rc |= sqlite3_bind_int64(s, f, item.i1)
        rc |= sqlite3_bind_int64(s, f + 1, item.i2)
        rc |= sqlite3_bind_int64(s, f + 2, item.i3)
        rc |= sqlite3_bind_double(s, f + 3, item.d1)
        rc |= sqlite3_bind_double(s, f + 4, item.d2)
        rc |= bindText(s, f + 5, item.t1)
        rc |= bindText(s, f + 6, item.t2)
        rc |= bindText(s, f + 7, item.t3)
        rc |= bindBlob(s, f + 8, item.b1)
        if rc != SQLITE_OK { try check(rc, "bind") }
    }

    func fetchAll() throws -> [CItem] {
        let s = try statement(Schema.selectAllSQL)
        defer { sqlite3_reset(s) }
        var items: [CItem] = []
        while true {
            let rc = sqlite3_step(s)
            if rc == SQLITE_ROW {
                items.append(CItem(statement: s))
            } else if rc == SQLITE_DONE {
                break
            } else {
                try check(rc, "step")
            }
        }
        return items
    }
}

final class SQLiteCContender: Contender {
    let name = "sqlite-c"
    private var path = ""
    private var writer: CConnection!
    private var readers: [CConnection] = []
    private var items: [CItem] = []

    func open(path: String) throws {
        self.path = path
        writer = try CConnection(path: path, readOnly: false)
        try writer.exec("PRAGMA journal_mode = WAL")
    }

    func close() {
        writer = nil
        readers = []
        items = []
    }

    func executeUntimed(_ statements: [String]) throws {
        for sql in statements { try writer.exec(sql) }
    }

    func load(_ rows: [SourceRow]) {
        items = rows.map(CItem.init)
    }

    private func reader(_ index: Int) throws -> CConnection {
        while readers.count <= index {
            readers.append(try CConnection(path: path, readOnly: true))
        }
        return readers[index]
    }

    func fetchAll() throws -> Int {
        let reader = try reader(0)
        try reader.exec("BEGIN DEFERRED")
        let items = try reader.fetchAll()
        try reader.exec("COMMIT")
        var sum = 0
        for item in items { sum &+= item.checksum }
        return sum
    }

    func insertAll() throws -> Int {
        try writer.exec("BEGIN IMMEDIATE")
        let s = try writer.statement(Schema.insertSQL)
        for item in items {
            try writer.bind(item, to: s, idIndex: 1, firstValueIndex: 2)
            let rc = sqlite3_step(s)
            sqlite3_reset(s)
            if rc != SQLITE_DONE { try writer.check(rc, "insert") }
        }
        try writer.exec("COMMIT")
        return items.count
    }

    func fetchByKey(_ keys: [Int64]) throws -> Int {
        let reader = try reader(0)
        try reader.exec("BEGIN DEFERRED")
        let s = try reader.statement(Schema.selectByKeySQL)
        var sum = 0
        for key in keys {
            sqlite3_bind_int64(s, 1, key)
            let rc = sqlite3_step(s)
            if rc == SQLITE_ROW {
                sum &+= CItem(statement: s).checksum
            } else if rc != SQLITE_DONE {
                try reader.check(rc, "step")
            }
            sqlite3_reset(s)
        }
        try reader.exec("COMMIT")
        return sum
    }

    func updateByKey() throws -> Int {
        try writer.exec("BEGIN IMMEDIATE")
        let s = try writer.statement(Schema.updateByKeySQL)
        var changes = 0
        for item in items {
            try writer.bind(item, to: s, idIndex: 10, firstValueIndex: 1)
            let rc = sqlite3_step(s)
            sqlite3_reset(s)
            if rc != SQLITE_DONE { try writer.check(rc, "update") }
            changes += Int(sqlite3_changes(writer.db))
        }
        try writer.exec("COMMIT")
        return changes
    }

    func deleteByKey(_ keys: [Int64]) throws -> Int {
        try writer.exec("BEGIN IMMEDIATE")
        let s = try writer.statement(Schema.deleteByKeySQL)
        var changes = 0
        for key in keys {
            sqlite3_bind_int64(s, 1, key)
            let rc = sqlite3_step(s)
            sqlite3_reset(s)
            if rc != SQLITE_DONE { try writer.check(rc, "delete") }
            changes += Int(sqlite3_changes(writer.db))
        }
        try writer.exec("COMMIT")
        return changes
    }

    func concurrentReads(tasks: Int, readsPerTask: Int, rowCount: Int) throws -> Int {
        let connections = try (0..<tasks).map { try reader($0) }
        let keyCount = rowCount
        let writer = self.writer!
        let control = WriterControl()
        control.start(
            { key in
                try writer.exec("BEGIN IMMEDIATE")
                let s = try writer.statement(Schema.touchSQL)
                sqlite3_bind_int64(s, 1, key)
                let rc = sqlite3_step(s)
                sqlite3_reset(s)
                if rc != SQLITE_DONE { try writer.check(rc, "touch") }
                try writer.exec("COMMIT")
            }, keyCount: keyCount)
        let counts = ResultSlots(count: tasks)
        runOnThreads(tasks) { index in
            let connection = connections[index]
            do {
                var rows = 0
                for _ in 0..<readsPerTask {
                    try connection.exec("BEGIN DEFERRED")
                    rows += try connection.fetchAll().count
                    try connection.exec("COMMIT")
                }
                counts.set(index, .success(rows))
            } catch {
                counts.set(index, .failure(error))
            }
        }
        try control.stop()
        control.logCommits(name)
        return try counts.sum()
    }
}

/// Per-thread results.
final class ResultSlots: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Result<Int, any Error>?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func set(_ index: Int, _ result: Result<Int, any Error>) {
        lock.lock(); slots[index] = result; lock.unlock()
    }

    func sum() throws -> Int {
        try slots.reduce(0) { $0 + (try $1?.get() ?? 0) }
    }
}

/// Creates the seed database (table `seed`, `count` rows) with the C API; each library then
/// gets its own copy of the file.
func createSeedDatabase(path: String, rows: [SourceRow]) throws {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let connection = try CConnection(path: path, readOnly: false)
    try connection.exec("PRAGMA journal_mode = WAL")
    try connection.exec(Schema.createTable("seed"))
    try connection.exec("BEGIN IMMEDIATE")
    let s = try connection.statement("INSERT INTO seed (\(Schema.columnList)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
    for row in rows {
        try connection.bind(CItem(row), to: s, idIndex: 1, firstValueIndex: 2)
        let rc = sqlite3_step(s)
        sqlite3_reset(s)
        if rc != SQLITE_DONE { try connection.check(rc, "seed") }
    }
    try connection.exec("COMMIT")
    try connection.exec("PRAGMA wal_checkpoint(TRUNCATE)")
}

/// The SQLite library version, for the report.
func sqliteVersion() -> String {
    String(cString: sqlite3_libversion())
}
