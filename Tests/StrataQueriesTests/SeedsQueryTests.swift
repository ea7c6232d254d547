import Foundation
import StrataQueries
import StrataSQLite
import Testing

// The seeds' schema, declared with the macros (at file scope: a macro's generated extension
// is at file scope, where siblings of a nested type are not in scope).
@Table struct Game: Identifiable, Equatable {
    let id: Int
    var title = ""
}

@Table struct Player: Identifiable, Equatable {
    let id: Int
    var gameID: Game.ID
    var name = ""
    var score = 0
}

@Selection struct GameRow: Equatable {
    let game: Game
    let playerCount: Int
}

@Table struct RemindersList: Identifiable, Equatable {
    let id: Int
    var title = ""
    var color = 0x4a99ef
}

@Table struct Reminder: Identifiable, Equatable {
    let id: Int
    var remindersListID: RemindersList.ID
    var title = ""
    var isCompleted = false
    var priority: Int?
    var updatedAt: Date
}

/// A view's rows: every list with its count of incomplete reminders.
@Table struct RemindersListRow: Equatable {
    let remindersListID: Int
    let title: String
    let incompleteCount: Int
    let highestPriority: Int
}

/// A CTE's rows: selected into with `Columns`, then read like a table.
@Table @Selection struct HighScorer: Equatable {
    let playerID: Int
    let score: Int
}

extension Player.TableColumns {
    /// An extension point: a computed SQL expression usable in any query.
    var isWinning: some QueryExpression<Bool> { score >= 10 }
}

extension Player {
    /// A scope: a reusable base query.
    static var ranked: Select<Player, Player, ()> {
        order { ($0.score.desc(), $0.name) }
    }
}

func makeSeedsDatabase() throws -> DatabaseQueue {
    let db = try DatabaseQueue()
    try db.writeWithoutTransaction { db in
        try db.execute(
            sql: """
                CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT NOT NULL);
                CREATE TABLE players (id INTEGER PRIMARY KEY, gameID INTEGER NOT NULL REFERENCES games(id) ON DELETE CASCADE,
                                      name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0);
                CREATE TABLE remindersLists (id INTEGER PRIMARY KEY, title TEXT NOT NULL, color INTEGER NOT NULL);
                CREATE TABLE reminders (id INTEGER PRIMARY KEY,
                                        remindersListID INTEGER NOT NULL REFERENCES remindersLists(id) ON DELETE CASCADE,
                                        title TEXT NOT NULL, isCompleted INTEGER NOT NULL, priority INTEGER,
                                        updatedAt TEXT NOT NULL);
                INSERT INTO games VALUES (1, 'Chess'), (2, 'Go'), (3, 'Hearts');
                INSERT INTO players VALUES (1, 1, 'Ann', 12), (2, 1, 'Bob', 7), (3, 2, 'Cid', 3), (4, 1, 'Dee', 9);
                INSERT INTO remindersLists VALUES (1, 'Home', 1), (2, 'Work', 2), (3, 'Empty', 3);
                INSERT INTO reminders VALUES
                    (1, 1, 'Milk', 0, 1, '2000-01-01 00:00:00.000'),
                    (2, 1, 'Bread', 1, 3, '2000-01-01 00:00:00.000'),
                    (3, 2, 'Report', 0, NULL, '2000-01-01 00:00:00.000'),
                    (4, 2, 'Email', 0, 2, '2000-01-01 00:00:00.000');
                """)
    }
    return db
}

@Suite(.timeLimit(.minutes(5))) struct SeedsQueryTests {
    @Test func gamesWithPlayerCounts() throws {
        let query = Game.group(by: \.id)
            .leftJoin(Player.all) { $0.id.eq($1.gameID) }
            .order { $1.count().desc() }
            .select { GameRow.Columns(game: $0, playerCount: $1.count()) }
        #expect(
            query.sql == """
                SELECT "games"."id", "games"."title", count("players"."id") FROM "games" \
                LEFT JOIN "players" ON ("games"."id" = "players"."gameID") GROUP BY "games"."id" \
                ORDER BY count("players"."id") DESC
                """)
        let db = try makeSeedsDatabase()
        let rows = try db.read { try query.fetchAll($0) }
        #expect(
            rows == [
                GameRow(game: Game(id: 1, title: "Chess"), playerCount: 3),
                GameRow(game: Game(id: 2, title: "Go"), playerCount: 1),
                GameRow(game: Game(id: 3, title: "Hearts"), playerCount: 0),
            ])
    }

    @Test func remindersListViewWithLeftJoinAndIfnull() throws {
        let select = RemindersList.group(by: \.id)
            .leftJoin(Reminder.all) { $0.id.eq($1.remindersListID) && $1.isCompleted.eq(false) }
            .select { ($0.id, $0.title, $1.count(), $1.priority.max().ifnull(0)) }
        let view = RemindersListRow.createTemporaryView(as: select)
        #expect(
            view.sql == """
                CREATE TEMPORARY VIEW "remindersListRows" ("remindersListID", "title", "incompleteCount", "highestPriority") AS \
                SELECT "remindersLists"."id", "remindersLists"."title", count("reminders"."id"), ifnull(max("reminders"."priority"), 0) \
                FROM "remindersLists" LEFT JOIN "reminders" ON (("remindersLists"."id" = "reminders"."remindersListID") \
                AND ("reminders"."isCompleted" = 0)) GROUP BY "remindersLists"."id"
                """)
        let db = try makeSeedsDatabase()
        try db.writeWithoutTransaction { try view.execute($0) }
        let rows = try db.read { try RemindersListRow.order { $0.remindersListID }.fetchAll($0) }
        #expect(
            rows == [
                RemindersListRow(remindersListID: 1, title: "Home", incompleteCount: 1, highestPriority: 1),
                RemindersListRow(remindersListID: 2, title: "Work", incompleteCount: 2, highestPriority: 2),
                RemindersListRow(remindersListID: 3, title: "Empty", incompleteCount: 0, highestPriority: 0),
            ])
        let busy = try db.read { try RemindersListRow.where { $0.incompleteCount > 1 }.select(\.title).fetchAll($0) }
        #expect(busy == ["Work"])
    }

    @Test func triggerTouchesUpdatedAt() throws {
        let db = try makeSeedsDatabase()
        let trigger = Reminder.createTemporaryTrigger("touch", after: .update(touch: \.updatedAt))
        #expect(
            trigger.sql == """
                CREATE TEMPORARY TRIGGER "touch" AFTER UPDATE ON "reminders" FOR EACH ROW BEGIN \
                UPDATE "reminders" SET "updatedAt" = strftime('%Y-%m-%d %H:%M:%f', 'now') WHERE rowid = NEW.rowid; END
                """)
        let before = Date()
        try db.writeWithoutTransaction { db in
            try trigger.execute(db)
            try db.execute(sql: "UPDATE reminders SET isCompleted = 1 WHERE id = 1")
        }
        let reminders = try db.read { try Reminder.order { $0.id }.fetchAll($0) }
        #expect(reminders[0].isCompleted)
        #expect(reminders[0].updatedAt >= before.addingTimeInterval(-1))
        #expect(reminders[1].updatedAt == Date(timeIntervalSince1970: 946_684_800))
    }

    @Test func cteSelectsIntoATableThenReadsIt() throws {
        let query = With(
            Player.where(\.isWinning).select { HighScorer.Columns(playerID: $0.id, score: $0.score) }
        ) {
            HighScorer.order { $0.score.desc() }
        }
        #expect(
            query.sql == """
                WITH "highScorers" ("playerID", "score") AS (SELECT "players"."id", "players"."score" FROM "players" \
                WHERE ("players"."score" >= ?)) SELECT "highScorers"."playerID", "highScorers"."score" FROM "highScorers" \
                ORDER BY "highScorers"."score" DESC
                """)
        let db = try makeSeedsDatabase()
        #expect(try db.read { try query.fetchAll($0) } == [HighScorer(playerID: 1, score: 12)])
    }

    @Test func scopesAndComputedExpressions() throws {
        let db = try makeSeedsDatabase()
        let names = try db.read { try Player.ranked.where { !$0.isWinning }.select(\.name).fetchAll($0) }
        #expect(names == ["Dee", "Bob", "Cid"])
        let top = try db.read { try Player.ranked.limit(1).fetchOne($0) }
        #expect(top?.name == "Ann")
    }

    @Test func aggregatesSubqueriesAndPredicates() throws {
        let db = try makeSeedsDatabase()
        try db.read { db in
            let sums: [Int?] = try Player.select { $0.score.sum() }.fetchAll(db)
            #expect(sums == [31])
            let averages: [Double?] = try Player.select { $0.score.avg() }.fetchAll(db)
            #expect(averages == [7.75])
            let range = try #require(try Player.select { ($0.score.min(), $0.score.max()) }.fetchOne(db))
            #expect(range.0 == 3 && range.1 == 12)
            #expect(try Player.count().fetchOne(db) == 4)
            #expect(try Player.where { $0.name.like("%e%") }.select(\.name).fetchAll(db) == ["Dee"])
            #expect(try Player.where { $0.id.in([1, 3]) }.select(\.name).fetchAll(db) == ["Ann", "Cid"])
            #expect(try Game.where { $0.id.in(Player.select(\.gameID)) }.select(\.title).fetchAll(db) == ["Chess", "Go"])
            #expect(
                try Game.where { game in !Player.where { $0.gameID.eq(game.id) }.select(\.gameID).exists() }.select(\.title).fetchAll(db)
                    == ["Hearts"])
            #expect(try Reminder.where { $0.priority.is(nil) }.select(\.title).fetchAll(db) == ["Report"])
            #expect(try Reminder.where { $0.priority == nil }.select(\.title).fetchAll(db) == ["Report"])
            let scaled: [Int?] = try Reminder.select { $0.priority.map { $0 * 10 } }.order { $0.id }.fetchAll(db)
            #expect(scaled == [10, 30, nil, 20])
            #expect(try Player.select(\.gameID).distinct().order { $0.gameID }.fetchAll(db) == [1, 2])
            #expect(try Player.group(by: \.gameID).having { $0.count() > 1 }.select(\.gameID).fetchAll(db) == [1])
            #expect(try Player.find(2).fetchOne(db)?.name == "Bob")
            #expect(try Player.find([1, 2]).fetchCount(db) == 2)
        }
    }

    @Test func joinsOfThreeTablesAndRightJoin() throws {
        let db = try makeSeedsDatabase()
        let pairs = try db.read { db in
            try Player.all
                .join(Game.all) { $0.gameID.eq($1.id) }
                .where { $1.title.eq("Chess") }
                .order { player, _ in player.name }
                .select { ($0.name, $1.title) }
                .fetchAll(db)
        }
        #expect(pairs.map(\.0) == ["Ann", "Bob", "Dee"])
        let right = try db.read { db in
            // A WHERE would drop the unmatched games (their player columns are NULL), so the
            // filter on players belongs in the join condition.
            try Player.all
                .rightJoin(Game.all) { $0.gameID.eq($1.id) && $0.score > 10 }
                .order { _, game in game.id }
                .fetchAll(db)
        }
        #expect(right.map { $0.0?.name } == ["Ann", nil, nil])
        #expect(right.map { $0.1.title } == ["Chess", "Go", "Hearts"])
    }

    @Test func builderStatementsHitTheStatementCache() throws {
        let db = try makeSeedsDatabase()
        try db.read { db in
            _ = try Player.where { $0.score > 1 }.fetchAll(db)
            let count = db.cachedStatementCount
            for threshold in 2...20 {
                _ = try Player.where { $0.score > threshold }.fetchAll(db)
            }
            #expect(db.cachedStatementCount == count)
        }
    }
}
