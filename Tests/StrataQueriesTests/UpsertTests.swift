import Foundation
import StrataQueries
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct UpsertTests {
    static let upsertClause =
        #"ON CONFLICT ("id") DO UPDATE SET "gameID" = "excluded"."gameID", "name" = "excluded"."name", "score" = "excluded"."score", "nickname" = "excluded"."nickname""#

    func players(_ db: DatabaseQueue) throws -> [HPlayer] {
        try db.read { try HPlayer.order(by: \.id).fetchAll($0) }
    }

    @Test func upsertUpdatesExistingRowsAndInsertsNewOnes() throws {
        let upsert = HPlayer.upsert {
            HPlayer(id: 1, gameID: 2, name: "Ann", score: 20, nickname: "A")
            HPlayer(id: 7, gameID: 3, name: "Gil", score: 1)
        }
        #expect(
            upsert.sql == #"INSERT INTO "players" "# + playerColumnList + #" VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) "# + Self.upsertClause)
        #expect(
            upsert.bindings == [
                .integer(1), .integer(2), .text("Ann"), .integer(20), .text("A"),
                .integer(7), .integer(3), .text("Gil"), .integer(1), .null,
            ])
        let db = try makeGamesDatabase()
        try db.write { try upsert.execute($0) }
        let rows = try players(db)
        #expect(rows.count == 5)
        #expect(rows.first == HPlayer(id: 1, gameID: 2, name: "Ann", score: 20, nickname: "A"))
        #expect(rows.last == HPlayer(id: 7, gameID: 3, name: "Gil", score: 1))
    }

    @Test func draftUpsertInsertsWithoutAKeyAndUpdatesWithOne() throws {
        let upsert = HPlayer.upsert {
            HPlayer.Draft(id: 2, gameID: 1, name: "Bobby", score: 8)
            HPlayer.Draft(gameID: 3, name: "Hana")
        }
        #expect(upsert.sql.hasSuffix(Self.upsertClause))
        #expect(upsert.bindings.prefix(6) == [.integer(2), .integer(1), .text("Bobby"), .integer(8), .null, .null])
        let db = try makeGamesDatabase()
        try db.write { try upsert.execute($0) }
        let rows = try players(db)
        #expect(rows.map(\.name) == ["Ann", "Bobby", "Cid", "Dee", "Hana"])
        #expect(rows[1].nickname == nil)
        #expect(rows[4].id == 5)
    }

    @Test func onConflictDoUpdateCombinesExistingAndProposedRows() throws {
        let insert = HPlayer.insert { HPlayer(id: 1, gameID: 1, name: "Ann", score: 5) }
            .onConflict {
                $0.id
            } doUpdate: {
                $0.score += $1.score
            }
        #expect(
            insert.sql == #"INSERT INTO "players" "# + playerColumnList
                + #" VALUES (?, ?, ?, ?, ?) ON CONFLICT ("id") DO UPDATE SET "score" = ("players"."score" + "excluded"."score")"#)
        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        #expect(try db.read { try HPlayer.find(1).select(\.score).fetchOne($0) } == 17)

        let fresh = HPlayer.insert { HPlayer(id: 8, gameID: 1, name: "Ike", score: 5) }
            .onConflict {
                $0.id
            } doUpdate: {
                $0.score += $1.score
            }
        try db.write { try fresh.execute($0) }
        #expect(try db.read { try HPlayer.find(8).select(\.score).fetchOne($0) } == 5)
    }

    @Test func onConflictWithSeveralTargetColumns() throws {
        let db = try makeGamesDatabase()
        try db.write { try $0.execute(sql: "CREATE UNIQUE INDEX playerPerGame ON players(gameID, name)") }
        let insert = HPlayer.insert {
            ($0.gameID, $0.name, $0.score)
        } values: {
            (1, "Bob", 10)
            (2, "Bob", 10)
        }
        .onConflict {
            ($0.gameID, $0.name)
        } doUpdate: { row, excluded in
            row.score = excluded.score
            row.nickname = excluded.name
        }
        #expect(
            insert.sql
                == #"INSERT INTO "players" ("gameID", "name", "score") VALUES (?, ?, ?), (?, ?, ?) ON CONFLICT ("gameID", "name") DO UPDATE SET "score" = "excluded"."score", "nickname" = "excluded"."name""#
        )
        try db.write { try insert.execute($0) }
        let bobs = try db.read { try HPlayer.where { $0.name.eq("Bob") }.order(by: \.id).fetchAll($0) }
        #expect(
            bobs == [HPlayer(id: 2, gameID: 1, name: "Bob", score: 10, nickname: "Bob"), HPlayer(id: 5, gameID: 2, name: "Bob", score: 10)])
    }

    @Test func onConflictDoNothing() throws {
        let targeted = HPlayer.insert { HPlayer(id: 1, gameID: 2, name: "Other", score: 0) }.onConflictDoNothing { $0.id }
        #expect(targeted.sql.hasSuffix(#" ON CONFLICT ("id") DO NOTHING"#))
        let any = HPlayer.insert { HPlayer(id: 2, gameID: 2, name: "Other", score: 0) }.onConflictDoNothing()
        #expect(any.sql.hasSuffix(#" ON CONFLICT DO NOTHING"#))
        let db = try makeGamesDatabase()
        try db.write { db in
            try targeted.execute(db)
            try any.execute(db)
        }
        #expect(try players(db).map(\.name) == ["Ann", "Bob", "Cid", "Dee"])
    }

    @Test func insertSelectWithUpsertIsUnambiguous() throws {
        // The names of high scorers are appended to their game's title, which already exists.
        let db = try makeGamesDatabase()
        let insert = HGame.insert {
            ($0.id, $0.title)
        } select: {
            HPlayer.where { $0.score > 8 }.select { ($0.gameID, $0.name) }
        }
        .onConflict {
            $0.id
        } doUpdate: {
            $0.title += " & " + $1.title
        }
        #expect(
            insert.sql
                == #"INSERT INTO "games" ("id", "title") SELECT * FROM (SELECT "players"."gameID", "players"."name" FROM "players" WHERE ("players"."score" > ?)) WHERE 1 ON CONFLICT ("id") DO UPDATE SET "title" = ("games"."title" || (? || "excluded"."title"))"#
        )
        try db.write { try insert.execute($0) }
        #expect(try db.read { try HGame.find(1).select(\.title).fetchOne($0) } == "Chess & Ann & Dee")
    }

    @Test func doUpdateWithoutAssignmentsThrows() throws {
        let db = try makeGamesDatabase()
        let insert = HPlayer.insert { HPlayer(id: 1, gameID: 1, name: "Ann", score: 5) }.onConflict {
            $0.id
        } doUpdate: { _, _ in
        }
        let error = #expect(throws: DatabaseError.self) { try db.write { try insert.execute($0) } }
        #expect(error?.resultCode == .misuse)
        #expect(try db.read { try HPlayer.find(1).select(\.score).fetchOne($0) } == 12)
    }

    @Test func emptyUpsertExecutesNothing() throws {
        let upsert = HPlayer.upsert { [HPlayer]() }
        #expect(upsert.sql == "")
        let db = try makeGamesDatabase()
        try db.write { try upsert.execute($0) }
        #expect(try players(db).count == 4)
    }

    @Test func sameShapeReusesThePreparedStatement() throws {
        let first = HPlayer.upsert { HPlayer(id: 1, gameID: 1, name: "Ann", score: 1) }
        let second = HPlayer.upsert { HPlayer(id: 9, gameID: 2, name: "Ned", score: 2) }
        #expect(first.sql == second.sql)
        let db = try makeGamesDatabase()
        try db.write { db in
            try first.execute(db)
            let cached = db.cachedStatementCount
            try second.execute(db)
            #expect(db.cachedStatementCount == cached)
        }
        #expect(try players(db).map(\.score) == [1, 7, 3, 9, 2])
    }
}
