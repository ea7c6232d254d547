import Foundation
import StrataQueries
import StrataSQLite
import Testing

/// An FTS5 virtual table.
@Table struct ReminderText: Equatable {
    let title: String
    let notes: String
}

/// The SQL of every read operation, asserted exactly, and each run against a real database.
@Suite(.timeLimit(.minutes(5))) struct SQLSnapshotTests {
    let db: DatabaseQueue

    init() throws {
        db = try makeSeedsDatabase()
    }

    func check<S: QueryStatement>(_ statement: S, _ sql: String, bindings: [DatabaseValue] = []) throws {
        #expect(statement.sql == sql)
        #expect(statement.bindings == bindings)
        try db.read { try statement.execute($0) }
    }

    @Test func clauses() throws {
        try check(
            Player.distinct().select(\.gameID),
            #"SELECT DISTINCT "players"."gameID" FROM "players""#)
        try check(
            Player.group(by: \.gameID).having { $0.count() > 1 }.select { ($0.gameID, $0.score.sum()) },
            #"SELECT "players"."gameID", sum("players"."score") FROM "players" GROUP BY "players"."gameID" HAVING (count("players"."id") > ?)"#,
            bindings: [.integer(1)])
        try check(
            Reminder.order { $0.priority.desc(nulls: .last) }.limit(2),
            #"SELECT "reminders"."id", "reminders"."remindersListID", "reminders"."title", "reminders"."isCompleted", "reminders"."priority", "reminders"."updatedAt" FROM "reminders" ORDER BY "reminders"."priority" DESC NULLS LAST LIMIT ?"#,
            bindings: [.integer(2)])
        try check(
            Game.all.select(\.title).limit(10, offset: 1),
            #"SELECT "games"."title" FROM "games" LIMIT ? OFFSET ?"#, bindings: [.integer(10), .integer(1)])
        try check(Game.count(), #"SELECT count(*) FROM "games""#)
    }

    @Test func predicates() throws {
        try check(
            Player.where { $0.name.like("A%") }.select(\.id),
            #"SELECT "players"."id" FROM "players" WHERE ("players"."name" LIKE ?)"#, bindings: [.text("A%")])
        try check(
            Player.where { $0.id.in([1, 2]) && $0.score.between(1, and: 10) }.select(\.id),
            #"SELECT "players"."id" FROM "players" WHERE (("players"."id" IN (?, ?)) AND ("players"."score" BETWEEN ? AND ?))"#,
            bindings: [.integer(1), .integer(2), .integer(1), .integer(10)])
        try check(
            Player.where { $0.id.in([Int]()) }.select(\.id),
            #"SELECT "players"."id" FROM "players" WHERE ("players"."id" IN (NULL))"#)
        try check(
            Reminder.where { $0.priority.is(nil) || $0.priority.isNot(nil).not() }.select(\.id),
            #"SELECT "reminders"."id" FROM "reminders" WHERE (("reminders"."priority" IS NULL) OR (NOT ("reminders"."priority" IS NOT NULL)))"#
        )
        try check(
            Game.where { _ in Player.where { $0.score > 10 }.exists() }.select(\.id),
            #"SELECT "games"."id" FROM "games" WHERE EXISTS (SELECT "players"."id", "players"."gameID", "players"."name", "players"."score" FROM "players" WHERE ("players"."score" > ?))"#,
            bindings: [.integer(10)])
        try check(
            Reminder.select { $0.priority.map { $0 + 1 } },
            #"SELECT CASE WHEN "reminders"."priority" IS NULL THEN NULL ELSE ("reminders"."priority" + ?) END FROM "reminders""#,
            bindings: [.integer(1)])
    }

    @Test func aggregates() throws {
        try check(
            Player.select { ($0.score.sum(), $0.score.avg(), $0.score.min(), $0.score.max(), $0.count(distinct: true)) },
            #"SELECT sum("players"."score"), avg("players"."score"), min("players"."score"), max("players"."score"), count(DISTINCT "players"."id") FROM "players""#
        )
        let row = try #require(
            try db.read {
                try Player.select { ($0.score.sum(), $0.score.avg(), $0.score.min(), $0.score.max(), $0.count(distinct: true)) }.fetchOne(
                    $0)
            })
        #expect(row.0 == 31 && row.1 == 7.75 && row.2 == 3 && row.3 == 12 && row.4 == 4)
        let names = try db.read { try Player.select { $0.name.groupConcat(separator: "|") }.fetchOne($0) }
        #expect(names == "Ann|Bob|Cid|Dee")
    }

    @Test func fullJoinKeepsBothSides() throws {
        let query = Player.where { $0.score > 10 }.fullJoin(Game.all) { $0.gameID.eq($1.id) }
        #expect(query.sql.contains(#"FULL JOIN "games" ON ("players"."gameID" = "games"."id")"#))
        let rows = try db.read { try query.fetchAll($0) }
        #expect(rows.count == 1)
        #expect(rows[0].0?.name == "Ann" && rows[0].1?.title == "Chess")
    }

    @Test func sqlFragmentsMixColumnsAndValues() throws {
        let query = Player.where { #sql("\($0.name) COLLATE NOCASE = \("ann")") }.select(\.id)
        #expect(query.sql == #"SELECT "players"."id" FROM "players" WHERE "players"."name" COLLATE NOCASE = ?"#)
        #expect(try db.read { try query.fetchAll($0) } == [1])
    }

    @Test func fullTextSearchOnAVirtualTable() throws {
        try db.writeWithoutTransaction { db in
            try db.execute(
                sql: """
                    CREATE VIRTUAL TABLE reminderTexts USING fts5(title, notes);
                    INSERT INTO reminderTexts VALUES ('Milk', 'oat milk, two cartons'), ('Report', 'quarterly numbers'),
                                                     ('Bread', 'rye');
                    """)
        }
        let query = ReminderText.where { $0.match("milk OR rye") }.order { $0.rank }
        #expect(
            query.sql
                == #"SELECT "reminderTexts"."title", "reminderTexts"."notes" FROM "reminderTexts" WHERE ("reminderTexts" MATCH ?) ORDER BY "reminderTexts"."rank""#
        )
        #expect(try db.read { try query.fetchAll($0) }.map(\.title).sorted() == ["Bread", "Milk"])
        let marked = try db.read { db in
            try ReminderText.where { $0.notes.match("numbers") }.select { $0.highlight(\.notes, open: "[", close: "]") }.fetchAll(db)
        }
        #expect(marked == ["quarterly [numbers]"])
    }
}
