import Foundation
import StrataSQLite

// Strata through its fastest public path: a hand-written TableRecord whose init(row:) reads by
// index and whose encodeColumns binds in column order, on a DatabasePool with synchronous
// read and write.

struct SItem: TableRecord {
    static let tableName = "items"
    static let columnNames = Schema.columns

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

    init(row: Row) throws {
        id = try row[0]
        i1 = try row[1]
        i2 = try row[2]
        i3 = try row[3]
        d1 = try row[4]
        d2 = try row[5]
        t1 = try row[6]
        t2 = try row[7]
        t3 = try row[8]
        b1 = try row[9]
    }

    func encodeColumns(to columns: inout ColumnEncoder) throws {
        columns.append(id)
        columns.append(i1)
        columns.append(i2)
        columns.append(i3)
        columns.append(d1)
        columns.append(d2)
        columns.append(t1)
        columns.append(t2)
        columns.append(t3)
        columns.append(b1)
    }

    var checksum: Int { StrataBench.checksum(id: id, i1: i1, d1: d1, t1: t1, t3: t3, b1: b1) }
}

final class StrataContender: Contender {
    let name = "strata"
    private var pool: DatabasePool!
    private var items: [SItem] = []

    func open(path: String) throws {
        pool = try StrataPool.open(path: path)
    }

    func close() {
        pool?.close()
        pool = nil
        items = []
    }

    func executeUntimed(_ statements: [String]) throws {
        try StrataPool.executeUntimed(statements, in: pool)
    }

    func load(_ rows: [SourceRow]) {
        items = rows.map(SItem.init)
    }

    func fetchAll() throws -> Int {
        let items = try pool.read { db in try SItem.fetchAll(db) }
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
                if let item = try SItem.fetchOne(db, id: key) { sum &+= item.checksum }
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
            for key in keys where try SItem.deleteOne(db, id: key) { changes += 1 }
            return changes
        }
    }

    func concurrentReads(tasks: Int, readsPerTask: Int, rowCount: Int) throws -> Int {
        try StrataPool.concurrentReads(
            in: pool, name: name, tasks: tasks, readsPerTask: readsPerTask, rowCount: rowCount
        ) { db in try SItem.fetchAll(db).count }
    }
}
