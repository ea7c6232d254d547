import Foundation
import StrataSQLite
import Synchronization
import Testing

/// A pool on a fresh temporary file (WAL), so readers run beside the writer.
final class TemporaryPool: @unchecked Sendable {
    let directory: URL
    let pool: DatabasePool

    init(configuration: Configuration = Configuration()) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-observation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        pool = try DatabasePool(path: directory.appendingPathComponent("db.sqlite").path, configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
                CREATE TABLE players (id INTEGER PRIMARY KEY, gameID INTEGER REFERENCES games(id) ON DELETE CASCADE, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE unrelated (id INTEGER PRIMARY KEY, note TEXT);
                """)
        }
    }

    deinit {
        pool.close()
        try? FileManager.default.removeItem(at: directory)
    }
}

struct Player: TableRecord, Sendable, Equatable, Hashable {
    static let tableName = "players"
    static let columnNames = ["id", "gameID", "name", "score"]
    var id: Int64
    var gameID: Int64?
    var name: String
    var score: Int

    init(id: Int64, gameID: Int64? = nil, name: String, score: Int = 0) {
        self.id = id
        self.gameID = gameID
        self.name = name
        self.score = score
    }

    init(row: Row) throws {
        id = try row[0]
        gameID = try row[1]
        name = try row[2]
        score = try row[3]
    }

    func encodeColumns(to columns: inout ColumnEncoder) {
        columns.append(id)
        columns.append(gameID)
        columns.append(name)
        columns.append(score)
    }
}

/// Counts calls from any thread.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)
    func increment() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Waits for `condition` with a bound, polling the next elements of `iterator`.
func nextValue<I: AsyncIteratorProtocol>(
    _ iterator: inout I, where condition: (I.Element) -> Bool, limit: Int = 1000
) async throws -> I.Element? {
    for _ in 0..<limit {
        guard let element = try await iterator.next() else { return nil }
        if condition(element) { return element }
    }
    return nil
}
