import StrataSQLite

// What the `strata` and `strata-table` contenders share: the same pool settings and the same
// concurrent-reads driver, so the two differ only in how they declare and query the rows.
enum StrataPool {
    static func open(path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "bench"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return try DatabasePool(path: path, configuration: configuration)
    }

    static func executeUntimed(_ statements: [String], in pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in
            for sql in statements { try db.execute(sql: sql) }
        }
    }

    /// `tasks` readers each running `readsPerTask` reads of `countRows`, while a writer
    /// touches rows; returns the rows read.
    static func concurrentReads(
        in pool: DatabasePool, name: String, tasks: Int, readsPerTask: Int, rowCount: Int,
        countRows: @escaping @Sendable (Database) throws -> Int
    ) throws -> Int {
        let control = WriterControl()
        control.start(
            { key in
                try pool.write { db in try db.execute(sql: Schema.touchSQL, arguments: [key]) }
            }, keyCount: rowCount)
        let result = Result {
            try blockingAwait {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<tasks {
                        group.addTask {
                            var rows = 0
                            for _ in 0..<readsPerTask {
                                rows += try await pool.read(countRows)
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
