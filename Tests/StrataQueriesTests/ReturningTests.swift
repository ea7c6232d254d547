import Foundation
import StrataQueries
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct ReturningTests {
    static let allPlayerColumns = #""players"."id", "players"."gameID", "players"."name", "players"."score", "players"."nickname""#

    @Test func insertedDraftReturnsItsAssignedKey() throws {
        let insert = HPlayer.insert { HPlayer.Draft(gameID: 2, name: "Eve") }.returning(\.id)
        #expect(insert.sql == #"INSERT INTO "players" "# + playerColumnList + #" VALUES (?, ?, ?, ?, ?) RETURNING "players"."id""#)
        let db = try makeGamesDatabase()
        let id = try db.write { try insert.fetchOne($0) }
        #expect(id == 5)
    }

    @Test func insertReturnsWholeRows() throws {
        let closure = HPlayer.insert {
            HPlayer.Draft(gameID: 2, name: "Eve")
            HPlayer.Draft(id: 20, gameID: 3, name: "Fay", score: 2, nickname: "F")
        }.returning { $0 }
        let keyPath = HPlayer.insert { HPlayer.Draft(gameID: 2, name: "Eve") }.returning(\.self)
        #expect(closure.sql.hasSuffix(" RETURNING " + Self.allPlayerColumns))
        #expect(keyPath.sql.hasSuffix(" RETURNING " + Self.allPlayerColumns))

        let db = try makeGamesDatabase()
        let rows: [HPlayer] = try db.write { try closure.fetchAll($0) }
        #expect(
            rows == [HPlayer(id: 5, gameID: 2, name: "Eve", score: 0), HPlayer(id: 20, gameID: 3, name: "Fay", score: 2, nickname: "F")])
        let one: HPlayer? = try db.write { try keyPath.fetchOne($0) }
        #expect(one == HPlayer(id: 21, gameID: 2, name: "Eve", score: 0))
    }

    @Test func insertReturnsTuplesAndExpressions() throws {
        let insert = HPlayer.insert {
            ($0.gameID, $0.name)
        } values: {
            (1, "Gus")
            (2, "Hal")
        }
        .returning { ($0.id, $0.name.upper(), $0.score) }
        #expect(
            insert.sql
                == #"INSERT INTO "players" ("gameID", "name") VALUES (?, ?), (?, ?) RETURNING "players"."id", upper("players"."name"), "players"."score""#
        )
        let db = try makeGamesDatabase()
        let rows = try db.write { try insert.fetchAll($0) }
        #expect(rows.map(\.0) == [5, 6])
        #expect(rows.map(\.1) == ["GUS", "HAL"])
        #expect(rows.map(\.2) == [0, 0])
    }

    @Test func updateReturnsRowsAfterTheUpdate() throws {
        let update = HPlayer.where { $0.gameID.eq(1) }.update { $0.score += 1 }.returning { ($0.id, $0.score) }
        #expect(
            update.sql
                == #"UPDATE "players" SET "score" = ("players"."score" + ?) WHERE ("players"."gameID" = ?) RETURNING "players"."id", "players"."score""#
        )
        let db = try makeGamesDatabase()
        let returned = try db.write { try update.fetchAll($0) }
        let rows = returned.sorted { $0.0 < $1.0 }
        #expect(rows.map(\.0) == [1, 2, 4])
        #expect(rows.map(\.1) == [13, 8, 10])

        let nickname = try db.write { try HPlayer.find(2).update { $0.nickname = nil }.returning(\.nickname).fetchOne($0) }
        #expect(nickname == .some(nil))
        let none = try db.write { try HPlayer.find(99).update { $0.score = 0 }.returning(\.id).fetchOne($0) }
        #expect(none == nil)
    }

    @Test func deleteReturnsTheDeletedRows() throws {
        let delete = HPlayer.where { $0.score < 8 }.delete().returning { $0 }
        #expect(delete.sql == #"DELETE FROM "players" WHERE ("players"."score" < ?) RETURNING "# + Self.allPlayerColumns)
        let db = try makeGamesDatabase()
        let returned = try db.write { try delete.fetchAll($0) }
        let deleted = returned.sorted { $0.id < $1.id }
        #expect(
            deleted == [HPlayer(id: 2, gameID: 1, name: "Bob", score: 7, nickname: "B"), HPlayer(id: 3, gameID: 2, name: "Cid", score: 3)])
        #expect(try db.read { try HPlayer.fetchCount($0) } == 2)

        let name = try db.write { try HPlayer.delete(HPlayer(id: 1, gameID: 1, name: "Ann", score: 12)).returning(\.name).fetchOne($0) }
        #expect(name == "Ann")
    }

    @Test func upsertReturnsInsertedAndUpdatedRows() throws {
        let records = HPlayer.upsert {
            HPlayer(id: 1, gameID: 1, name: "Ann", score: 50)
            HPlayer(id: 30, gameID: 2, name: "Ola", score: 1)
        }.returning { ($0.id, $0.score) }
        #expect(
            records.sql == #"INSERT INTO "players" "# + playerColumnList + #" VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) "#
                + UpsertTests.upsertClause + #" RETURNING "players"."id", "players"."score""#)
        let db = try makeGamesDatabase()
        let rows = try db.write { try records.fetchAll($0) }
        #expect(rows.map(\.0) == [1, 30])
        #expect(rows.map(\.1) == [50, 1])
    }

    @Test func returningAgainReplacesTheChoice() throws {
        let delete = HPlayer.find(1).delete().returning(\.name).returning(\.score)
        #expect(delete.sql == #"DELETE FROM "players" WHERE ("players"."id" = ?) RETURNING "players"."score""#)
        let db = try makeGamesDatabase()
        #expect(try db.write { try delete.fetchOne($0) } == 12)
    }

    @Test func executeIgnoresReturnedRows() throws {
        let db = try makeGamesDatabase()
        try db.write { try HPlayer.delete().returning(\.id).execute($0) }
        #expect(try db.read { try HPlayer.fetchCount($0) } == 0)
    }
}
