import Foundation
import StrataQueries
import StrataSQLite

// Strata through StrataQueries: a `@Table` struct (the macro generates the by-index
// `init(decoder:)`, `encodeColumns` and the typed columns) read with the query builder
// (`TItem.all.fetchAll(db)`, `TItem.find(key).fetchOne(db)`), and written with the
// `TableRecord` methods a @Table type inherits (`insert`, `update`, `deleteOne(db, id:)`): the
// builder has no write statements yet. Same DatabasePool and configuration as `strata`.

@Table("items")
struct TItem {
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
}

extension TItem {
    init(_ row: SourceRow) {
        self.init(
            id: row.id, i1: row.i1, i2: row.i2, i3: row.i3, d1: row.d1, d2: row.d2,
            t1: row.t1, t2: row.t2, t3: row.t3, b1: row.b1)
    }

    var checksum: Int { StrataBench.checksum(id: id, i1: i1, d1: d1, t1: t1, t3: t3, b1: b1) }
}

final class StrataTableContender: Contender {
    let name = "strata-table"
    private var pool: DatabasePool!
    private var items: [TItem] = []

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
        items = rows.map(TItem.init)
    }

    func fetchAll() throws -> Int {
        let items = try pool.read { db in try TItem.all.fetchAll(db) }
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
                if let item = try TItem.find(key).fetchOne(db) { sum &+= item.checksum }
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
            for key in keys where try TItem.deleteOne(db, id: key) { changes += 1 }
            return changes
        }
    }

    func concurrentReads(tasks: Int, readsPerTask: Int, rowCount: Int) throws -> Int {
        try StrataPool.concurrentReads(
            in: pool, name: name, tasks: tasks, readsPerTask: readsPerTask, rowCount: rowCount
        ) { db in try TItem.all.fetchAll(db).count }
    }
}
