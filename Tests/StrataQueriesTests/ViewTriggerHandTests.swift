import Foundation
import StrataQueries
import StrataSQLite
import Testing

/// A hand-expanded view row: game, title and player count.
struct HGameRow: Table, Equatable {
    var gameID: Int
    var title: String
    var playerCount: Int
    struct TableColumns: TableDefinition {
        typealias QueryValue = HGameRow
        let gameID = TableColumn<HGameRow, Int>("gameID")
        let title = TableColumn<HGameRow, String>("title")
        let playerCount = TableColumn<HGameRow, Int>("playerCount")
        static var allColumns: [any TableColumnExpression] { let c = TableColumns(); return [c.gameID, c.title, c.playerCount] }
    }
    static let columns = TableColumns()
    static let tableName = "gameRows"
    static let columnNames = ["gameID", "title", "playerCount"]
    static let columnCount = 3
    init(gameID: Int, title: String, playerCount: Int) { self.gameID = gameID; self.title = title; self.playerCount = playerCount }
    init(decoder: inout QueryDecoder) throws {
        gameID = try decoder.decode(Int.self); title = try decoder.decode(String.self); playerCount = try decoder.decode(Int.self)
    }
    func encodeColumns(to columns: inout ColumnEncoder) throws {
        columns.append(gameID); columns.append(title); columns.append(playerCount)
    }
}

@Suite(.timeLimit(.minutes(5))) struct InlinedSQLTests {
    @Test func bindingsBecomeLiteralsOutsideQuotesAndComments() {
        let fragment = QueryFragment(
            sql: "SELECT ?, '?', \"?\", ? -- ?\n, ? /* ? */, ?",
            bindings: [.integer(1), .text("it's"), .real(1.5), .blob(Data([0, 255])), .null])
        #expect(fragment.inlinedSQL == "SELECT 1, '?', \"?\", 'it''s' -- ?\n, 1.5 /* ? */, X'00FF'")
    }
}

@Suite(.timeLimit(.minutes(5))) struct ViewAndTriggerSQLTests {
    @Test func viewWithLeftJoinAndIfnullInlinesItsValues() throws {
        let select = HGame.group(by: \.id)
            .leftJoin(HPlayer.all) { $0.id.eq($1.gameID) && $1.nickname.ifnull("?").neq("B") }
            .select { ($0.id, $0.title, $1.count()) }
        let view = HGameRow.createTemporaryView(as: select)
        #expect(
            view.sql
                == #"CREATE TEMPORARY VIEW "gameRows" ("gameID", "title", "playerCount") AS SELECT "games"."id", "games"."title", count("players"."id") FROM "games" LEFT JOIN "players" ON (("games"."id" = "players"."gameID") AND (ifnull("players"."nickname", '?') <> 'B')) GROUP BY "games"."id""#
        )
        let db = try makeGamesDatabase()
        try db.writeWithoutTransaction { try view.execute($0) }
        let rows = try db.read { try HGameRow.where { $0.playerCount.gt(0) }.order { $0.playerCount.desc() }.fetchAll($0) }
        #expect(rows == [HGameRow(gameID: 1, title: "Chess", playerCount: 2), HGameRow(gameID: 2, title: "Go", playerCount: 1)])
        try db.writeWithoutTransaction { try view.drop().execute($0) }
        #expect(throws: DatabaseError.self) { try db.read { try HGameRow.all.fetchAll($0) } }
    }

    @Test func triggerLogsDeletedRows() throws {
        let db = try makeGamesDatabase()
        let trigger = HPlayer.createTemporaryTrigger(after: .delete) { row in
            HGame.all.select { _ in row.old.name }
        } when: { row in
            row.old.score.gt(5)
        }
        #expect(trigger.sql.hasPrefix(#"CREATE TEMPORARY TRIGGER "strata_after_delete_on_players_"#))
        #expect(
            trigger.sql.hasSuffix(
                #" AFTER DELETE ON "players" FOR EACH ROW WHEN (OLD."score" > 5) BEGIN SELECT OLD."name" FROM "games"; END"#))
        try db.writeWithoutTransaction { db in
            try trigger.execute(db)
            try db.execute(sql: "DELETE FROM players WHERE id = 1")
        }
        // The same definition gives the same name, so IF NOT EXISTS makes re-creation harmless.
        let again = HPlayer.createTemporaryTrigger(ifNotExists: true, after: .delete) { row in
            HGame.all.select { _ in row.old.name }
        } when: { row in
            row.old.score.gt(5)
        }
        #expect(again.triggerName == trigger.triggerName)
        try db.writeWithoutTransaction { try again.execute($0) }
    }

    @Test func updateOfColumnsNamesThem() {
        let trigger = HPlayer.createTemporaryTrigger("log", after: .update { ($0.score, $0.name) }) { row in
            HGame.all.select { _ in row.new.score }
        }
        #expect(
            trigger.sql
                == #"CREATE TEMPORARY TRIGGER "log" AFTER UPDATE OF "score", "name" ON "players" FOR EACH ROW BEGIN SELECT NEW."score" FROM "games"; END"#
        )
    }

    @Test func fetchCountCountsTheStatementsRows() throws {
        let db = try makeGamesDatabase()
        #expect(try db.read { try HPlayer.where { $0.score.gt(5) }.fetchCount($0) } == 3)
        #expect(try db.read { try HPlayer.fetchCount($0) } == 4)
        #expect(try db.read { try HGame.where { _ in HPlayer.where { $0.score.gt(10) }.select(\.gameID).exists() }.fetchCount($0) } == 3)
        #expect(
            try db.read { try HGame.where { $0.id.in(HPlayer.where { $0.score.gt(10) }.select(\.gameID)) }.fetchAll($0) }.map(\.title) == [
                "Chess"
            ])
    }
}
