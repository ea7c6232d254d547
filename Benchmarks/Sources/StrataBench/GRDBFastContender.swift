import Foundation
import GRDB

// GRDB 7.10.0 written the way its documentation recommends when speed matters, rather than
// through the record protocols' convenience methods (that is "grdb-record"): raw SQL in
// statements from the connection's statement cache (`db.cachedStatement(sql:)`), so each SQL
// string is compiled once per connection; arguments set with `setUncheckedArguments`, which
// skips the per-call check of their count against the statement's parameters (the SQL here is
// fixed, so the check could never fail); rows decoded by index through `GItem.init(row:)`
// straight from the statement's cursor; writes through `execute()`. Same `DatabasePool` and
// configuration as the other GRDB contenders (`GRDBPool`).

final class GRDBFastContender: Contender {
    let name = "grdb-fast"
    private var pool: DatabasePool!
    private var items: [GItem] = []

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
        items = rows.map(GItem.init)
    }

    func fetchAll() throws -> Int {
        // fetchAll(statement) is Array(fetchCursor(statement)): one pass of the cursor.
        let items = try pool.read { db in
            try GItem.fetchAll(db.cachedStatement(sql: Schema.selectAllSQL))
        }
        var sum = 0
        for item in items { sum &+= item.checksum }
        return sum
    }

    func insertAll() throws -> Int {
        let items = self.items
        try pool.write { db in
            let statement = try db.cachedStatement(sql: Schema.insertSQL)
            for item in items {
                statement.setUncheckedArguments([
                    item.id, item.i1, item.i2, item.i3, item.d1, item.d2, item.t1, item.t2, item.t3, item.b1,
                ])
                try statement.execute()
            }
        }
        return items.count
    }

    func fetchByKey(_ keys: [Int64]) throws -> Int {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: Schema.selectByKeySQL)
            var sum = 0
            for key in keys {
                statement.setUncheckedArguments([key])
                if let item = try GItem.fetchOne(statement) { sum &+= item.checksum }
            }
            return sum
        }
    }

    func updateByKey() throws -> Int {
        let items = self.items
        return try pool.write { db in
            let statement = try db.cachedStatement(sql: Schema.updateByKeySQL)
            var changes = 0
            for item in items {
                statement.setUncheckedArguments([
                    item.i1, item.i2, item.i3, item.d1, item.d2, item.t1, item.t2, item.t3, item.b1, item.id,
                ])
                try statement.execute()
                changes += db.changesCount
            }
            return changes
        }
    }

    func deleteByKey(_ keys: [Int64]) throws -> Int {
        try pool.write { db in
            let statement = try db.cachedStatement(sql: Schema.deleteByKeySQL)
            var changes = 0
            for key in keys {
                statement.setUncheckedArguments([key])
                try statement.execute()
                changes += db.changesCount
            }
            return changes
        }
    }

    func concurrentReads(tasks: Int, readsPerTask: Int, rowCount: Int) throws -> Int {
        try GRDBPool.concurrentReads(
            in: pool, name: name, tasks: tasks, readsPerTask: readsPerTask, rowCount: rowCount,
            touch: { db, key in
                let statement = try db.cachedStatement(sql: Schema.touchSQL)
                statement.setUncheckedArguments([key])
                try statement.execute()
            },
            // Each reader connection of the pool has its own statement cache.
            countRows: { db in try GItem.fetchAll(db.cachedStatement(sql: Schema.selectAllSQL)).count })
    }
}
