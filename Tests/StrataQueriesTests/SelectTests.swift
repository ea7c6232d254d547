import Foundation
import StrataQueries
import StrataSQLite
import Testing

// Hand-expanded tables, until the macro tests cover @Table.
struct HGame: PrimaryKeyedTable, Equatable {
    var id: Int
    var title: String
    struct TableColumns: PrimaryKeyedTableDefinition {
        typealias QueryValue = HGame
        typealias PrimaryKey = Int
        let id = TableColumn<HGame, Int>("id")
        let title = TableColumn<HGame, String>("title")
        var primaryKey: TableColumn<HGame, Int> { id }
        static var allColumns: [any TableColumnExpression] { [TableColumns().id, TableColumns().title] }
    }
    struct Draft: TableDraft {
        typealias PrimaryTable = HGame
        var id: Int?
        var title: String
        func encodeColumns(to columns: inout ColumnEncoder) throws { columns.append(id); columns.append(title) }
    }
    static let columns = TableColumns()
    static let tableName = "games"
    static let columnNames = ["id", "title"]
    static let columnCount = 2
    init(id: Int, title: String) { self.id = id; self.title = title }
    init(decoder: inout QueryDecoder) throws {
        id = try decoder.decode(Int.self)
        title = try decoder.decode(String.self)
    }
    func encodeColumns(to columns: inout ColumnEncoder) throws { columns.append(id); columns.append(title) }
}

struct HPlayer: PrimaryKeyedTable, Equatable {
    var id: Int
    var gameID: Int
    var name: String
    var score: Int
    var nickname: String?
    struct TableColumns: PrimaryKeyedTableDefinition {
        typealias QueryValue = HPlayer
        typealias PrimaryKey = Int
        let id = TableColumn<HPlayer, Int>("id")
        let gameID = TableColumn<HPlayer, Int>("gameID")
        let name = TableColumn<HPlayer, String>("name")
        let score = TableColumn<HPlayer, Int>("score")
        let nickname = TableColumn<HPlayer, String?>("nickname")
        var primaryKey: TableColumn<HPlayer, Int> { id }
        static var allColumns: [any TableColumnExpression] {
            let c = TableColumns()
            return [c.id, c.gameID, c.name, c.score, c.nickname]
        }
        var isHighScorer: some QueryExpression<Bool> { score >= 10 }
    }
    struct Draft: TableDraft {
        typealias PrimaryTable = HPlayer
        var id: Int?
        var gameID: Int
        var name: String
        var score = 0
        var nickname: String?
        func encodeColumns(to columns: inout ColumnEncoder) throws {
            columns.append(id); columns.append(gameID); columns.append(name); columns.append(score); columns.append(nickname)
        }
    }
    static let columns = TableColumns()
    static let tableName = "players"
    static let columnNames = ["id", "gameID", "name", "score", "nickname"]
    static let columnCount = 5
    init(id: Int, gameID: Int, name: String, score: Int, nickname: String? = nil) {
        self.id = id; self.gameID = gameID; self.name = name; self.score = score; self.nickname = nickname
    }
    init(decoder: inout QueryDecoder) throws {
        id = try decoder.decode(Int.self)
        gameID = try decoder.decode(Int.self)
        name = try decoder.decode(String.self)
        score = try decoder.decode(Int.self)
        nickname = try decoder.decode(String?.self)
    }
    func encodeColumns(to columns: inout ColumnEncoder) throws {
        columns.append(id); columns.append(gameID); columns.append(name); columns.append(score); columns.append(nickname)
    }
}

func makeGamesDatabase() throws -> DatabaseQueue {
    let db = try DatabaseQueue()
    try db.writeWithoutTransaction { db in
        try db.execute(
            sql: """
                CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
                CREATE TABLE players (id INTEGER PRIMARY KEY, gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
                                      name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0, nickname TEXT);
                INSERT INTO games VALUES (1, 'Chess'), (2, 'Go'), (3, 'Hearts');
                INSERT INTO players VALUES (1, 1, 'Ann', 12, NULL), (2, 1, 'Bob', 7, 'B'), (3, 2, 'Cid', 3, NULL),
                                           (4, 1, 'Dee', 9, NULL);
                """)
    }
    return db
}

@Suite(.timeLimit(.minutes(5))) struct SelectTests {
    @Test func allSelectsEveryColumnQualified() throws {
        #expect(HGame.all.sql == #"SELECT "games"."id", "games"."title" FROM "games""#)
        let db = try makeGamesDatabase()
        let games = try db.read { try HGame.all.fetchAll($0) }
        #expect(games.map(\.title) == ["Chess", "Go", "Hearts"])
    }

    @Test func whereOrderLimit() throws {
        let query = HPlayer.where { $0.score > 5 }.order { ($0.score.desc(), $0.name) }.limit(2, offset: 1)
        #expect(
            query.sql
                == #"SELECT "players"."id", "players"."gameID", "players"."name", "players"."score", "players"."nickname" FROM "players" WHERE ("players"."score" > ?) ORDER BY "players"."score" DESC, "players"."name" LIMIT ? OFFSET ?"#
        )
        #expect(query.bindings == [.integer(5), .integer(2), .integer(1)])
        let db = try makeGamesDatabase()
        #expect(try db.read { try query.fetchAll($0) }.map(\.name) == ["Dee", "Bob"])
    }

    @Test func seedsQueryGamesWithPlayerCounts() throws {
        let query = HGame.group(by: \.id)
            .leftJoin(HPlayer.all) { $0.id.eq($1.gameID) }
            .order { $1.count().desc() }
            .select { ($0, $1.count()) }
        #expect(
            query.sql
                == #"SELECT "games"."id", "games"."title", count("players"."id") FROM "games" LEFT JOIN "players" ON ("games"."id" = "players"."gameID") GROUP BY "games"."id" ORDER BY count("players"."id") DESC"#
        )
        let db = try makeGamesDatabase()
        let rows = try db.read { try query.fetchAll($0) }
        #expect(rows.map { $0.0.title } == ["Chess", "Go", "Hearts"])
        #expect(rows.map { $0.1 } == [3, 1, 0])
    }

    @Test func leftJoinDecodesOptionalTable() throws {
        let db = try makeGamesDatabase()
        let rows = try db.read { db in
            try HGame.leftJoin(HPlayer.all) { $0.id.eq($1.gameID) && $1.score.gt(10) }
                .order { game, _ in game.id }
                .fetchAll(db)
        }
        #expect(rows.count == 3)
        #expect(rows[0].1?.name == "Ann")
        #expect(rows[1].1 == nil)
        #expect(rows[2].1 == nil)
    }

    @Test func threeWayJoinWithIfnull() throws {
        let db = try makeGamesDatabase()
        let joined = HGame.all.leftJoin(HPlayer.all) { $0.id.eq($1.gameID) }
        let filtered = joined.where { $1.nickname.ifnull("-").neq("B") }
        let selected = filtered.select { ($0.title, $1.name.ifnull("nobody"), $1.score.ifnull(0)) }
        let query = selected.order { $1.score.desc() }
        let rows = try db.read { try query.fetchAll($0) }
        #expect(rows.map { $0.1 } == ["Ann", "Dee", "Cid", "nobody"])
    }
}
