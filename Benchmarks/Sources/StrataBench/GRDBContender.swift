import Foundation
import GRDB

// GRDB 7.10.0 on a DatabasePool: once with a hand-written FetchableRecord reading by index
// (`row[0]`) and a hand-written PersistenceContainer encoding ("grdb-record"), once with a
// record whose init(row:) and encode(to:) come from Codable ("grdb-codable").

protocol GRDBBenchRecord: FetchableRecord, PersistableRecord, Sendable {
    init(_ row: SourceRow)
    var checksum: Int { get }
}

struct GItem: GRDBBenchRecord {
    static let databaseTableName = "items"

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

    init(row: Row) {
        id = row[0]
        i1 = row[1]
        i2 = row[2]
        i3 = row[3]
        d1 = row[4]
        d2 = row[5]
        t1 = row[6]
        t2 = row[7]
        t3 = row[8]
        b1 = row[9]
    }

    func encode(to container: inout PersistenceContainer) {
        container["id"] = id
        container["i1"] = i1
        container["i2"] = i2
        container["i3"] = i3
        container["d1"] = d1
        container["d2"] = d2
        container["t1"] = t1
        container["t2"] = t2
        container["t3"] = t3
        container["b1"] = b1
    }

    var checksum: Int { StrataBench.checksum(id: id, i1: i1, d1: d1, t1: t1, t3: t3, b1: b1) }
}

struct GCodableItem: GRDBBenchRecord, Codable {
    static let databaseTableName = "items"

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

    var checksum: Int { StrataBench.checksum(id: id, i1: i1, d1: d1, t1: t1, t3: t3, b1: b1) }
}

final class GRDBContender<Record: GRDBBenchRecord>: Contender {
    let name: String
    private var pool: DatabasePool!
    private var items: [Record] = []

    init(name: String) {
        self.name = name
    }

    func open(path: String) throws {
        pool = try GRDBPool.open(path: path)
    }

    func close() {
        try? pool?.close()
        pool = nil
        items = []
    }

    func executeUntimed(_ statements: [String]) throws {
        try GRDBPool.executeUntimed(statements, in: pool)
    }

    func load(_ rows: [SourceRow]) {
        items = rows.map(Record.init)
    }

    func fetchAll() throws -> Int {
        let items = try pool.read { db in try Record.fetchAll(db) }
        var sum = 0
        for item in items { sum &+= item.checksum }
        return sum
    }

    func insertAll() throws -> Int {
        let items = self.items
        try pool.write { db in
            for item in items { try item.insert(db) }
        }
        return items.count
    }

    func fetchByKey(_ keys: [Int64]) throws -> Int {
        try pool.read { db in
            var sum = 0
            for key in keys {
                if let item = try Record.fetchOne(db, key: key) { sum &+= item.checksum }
            }
            return sum
        }
    }

    func updateByKey() throws -> Int {
        let items = self.items
        try pool.write { db in
            for item in items { try item.update(db) }
        }
        return items.count
    }

    func deleteByKey(_ keys: [Int64]) throws -> Int {
        try pool.write { db in
            var changes = 0
            for key in keys where try Record.deleteOne(db, key: key) { changes += 1 }
            return changes
        }
    }

    func concurrentReads(tasks: Int, readsPerTask: Int, rowCount: Int) throws -> Int {
        try GRDBPool.concurrentReads(
            in: pool, name: name, tasks: tasks, readsPerTask: readsPerTask, rowCount: rowCount,
            touch: { db, key in try db.execute(sql: Schema.touchSQL, arguments: [key]) },
            countRows: { db in try Record.fetchAll(db).count })
    }
}
