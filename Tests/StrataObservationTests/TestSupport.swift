import StrataSQLite
import StrataTestSupport

/// The schema of the observation tests' pools: games, their players, and a table no test observes.
enum ObservationTestSchema {
    static let sql = """
        CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
        CREATE TABLE players (id INTEGER PRIMARY KEY, gameID INTEGER REFERENCES games(id) ON DELETE CASCADE, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE unrelated (id INTEGER PRIMARY KEY, note TEXT);
        """
}

/// A pool on a fresh temporary file with the observation tests' schema.
func makeGamesPool(configuration: Configuration = Configuration()) throws -> TemporaryPool {
    try TemporaryPool(configuration: configuration, schema: ObservationTestSchema.sql)
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
