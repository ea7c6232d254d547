import GRDB

// What the GRDB contenders share: the same pool settings and the same concurrent-reads driver,
// so that they differ only in how they use the pool.
enum GRDBPool {
    static func open(path: String) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.label = "bench"
        // A busy timeout, as the C connections (5 s) and Strata (its default) have: GRDB's default
        // fails at once, and a reader recovering the WAL index after a checkpoint briefly blocks a
        // writer's BEGIN IMMEDIATE.
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return try DatabasePool(path: path, configuration: configuration)
    }

    static func executeUntimed(_ statements: [String], in pool: DatabasePool) throws {
        try pool.writeWithoutTransaction { db in
            for sql in statements { try db.execute(sql: sql) }
            db.clearSchemaCache()
        }
    }

    /// `tasks` readers each running `readsPerTask` reads of `countRows`, while a writer
    /// `touch`es rows; returns the rows read.
    static func concurrentReads(
        in pool: DatabasePool, name: String, tasks: Int, readsPerTask: Int, rowCount: Int,
        touch: @escaping @Sendable (Database, Int64) throws -> Void,
        countRows: @escaping @Sendable (Database) throws -> Int
    ) throws -> Int {
        let control = WriterControl()
        control.start({ key in try pool.write { db in try touch(db, key) } }, keyCount: rowCount)
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
