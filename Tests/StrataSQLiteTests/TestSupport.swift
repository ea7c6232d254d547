import StrataSQLite

/// An in-memory queue with a `players` table used by many tests.
func makePlayersQueue(configuration: Configuration = Configuration()) throws -> DatabaseQueue {
    let queue = try DatabaseQueue(configuration: configuration)
    try queue.write { db throws in
        try db.execute(sql: """
            CREATE TABLE players (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                name TEXT NOT NULL UNIQUE,
                score INTEGER NOT NULL DEFAULT 0
            )
            """)
    }
    return queue
}
