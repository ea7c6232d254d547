import Foundation
import StrataQueries
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct DeleteTests {
    func ids(_ db: DatabaseQueue) throws -> [Int] {
        try db.read { try HPlayer.order(by: \.id).select(\.id).fetchAll($0) }
    }

    @Test func deletesEveryRow() throws {
        let delete = HPlayer.delete()
        #expect(delete.sql == #"DELETE FROM "players""#)
        #expect(delete.bindings == [])
        let db = try makeGamesDatabase()
        let changes = try db.write { db in
            try delete.execute(db)
            return db.changesCount
        }
        #expect(changes == 4)
        #expect(try ids(db) == [])
        #expect(try db.read { try HGame.fetchCount($0) } == 3)
    }

    @Test func deletesFilteredRows() throws {
        let delete = HPlayer.where { $0.score < 8 }.delete()
        #expect(delete.sql == #"DELETE FROM "players" WHERE ("players"."score" < ?)"#)
        #expect(delete.bindings == [.integer(8)])
        let db = try makeGamesDatabase()
        try db.write { try delete.execute($0) }
        #expect(try ids(db) == [1, 4])
    }

    @Test func whereCallsAreJoinedWithAnd() throws {
        let delete = HPlayer.delete().where { $0.gameID.eq(1) }.where { $0.nickname.is(nil) }
        #expect(delete.sql == #"DELETE FROM "players" WHERE ("players"."gameID" = ?) AND ("players"."nickname" IS NULL)"#)
        let fromSelect = HPlayer.where { $0.gameID.eq(1) }.delete().where { $0.nickname.is(nil) }
        #expect(fromSelect.sql == delete.sql)
        let db = try makeGamesDatabase()
        try db.write { try delete.execute($0) }
        #expect(try ids(db) == [2, 3])
    }

    @Test func deletesByKey() throws {
        let found = HPlayer.find(2).delete()
        #expect(found.sql == #"DELETE FROM "players" WHERE ("players"."id" = ?)"#)
        #expect(found.bindings == [.integer(2)])

        let cid = HPlayer(id: 3, gameID: 2, name: "Cid", score: 3)
        let record = HPlayer.delete(cid)
        #expect(record.sql == found.sql)
        #expect(record.bindings == [.integer(3)])

        let several = HPlayer.find([1, 4]).delete()
        #expect(several.sql == #"DELETE FROM "players" WHERE ("players"."id" IN (?, ?))"#)

        let db = try makeGamesDatabase()
        try db.write { db in
            try found.execute(db)
            #expect(db.changesCount == 1)
            try record.execute(db)
            #expect(db.changesCount == 1)
            try HPlayer.delete(cid).execute(db)
            #expect(db.changesCount == 0)
        }
        #expect(try ids(db) == [1, 4])
        try db.write { try several.execute($0) }
        #expect(try ids(db) == [])
    }

    @Test func deletingAGameCascadesToItsPlayers() throws {
        let db = try makeGamesDatabase()
        try db.write { try HGame.find(1).delete().execute($0) }
        #expect(try ids(db) == [3])
    }

    @Test func constraintViolationIsADatabaseErrorNamingTheSQL() throws {
        let db = try makeGamesDatabase()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE trophies (id INTEGER PRIMARY KEY, playerID INTEGER NOT NULL REFERENCES players(id))")
            try db.execute(sql: "INSERT INTO trophies VALUES (1, 1)")
        }
        let delete = HPlayer.find(1).delete()
        let error = #expect(throws: DatabaseError.self) { try db.write { try delete.execute($0) } }
        #expect(error?.resultCode == .constraint)
        #expect(error?.sql == delete.sql)
        #expect(try ids(db) == [1, 2, 3, 4])
    }

    @Test func selectsWithLimitsOrGroupsCannotBecomeDeletes() throws {
        let db = try makeGamesDatabase()
        let limited = HPlayer.order { $0.score.desc() }.limit(1).delete()
        let error = #expect(throws: DatabaseError.self) { try db.write { try limited.execute($0) } }
        #expect(error?.resultCode == .misuse)
        #expect(error?.message.contains("only its WHERE carries over") == true)
        #expect(throws: DatabaseError.self) { try db.write { try HPlayer.limit(10, offset: 2).delete().execute($0) } }
        #expect(throws: DatabaseError.self) {
            try db.write { try HPlayer.group(by: \.gameID).having { $0.score.count() > 1 }.delete().execute($0) }
        }
        #expect(try ids(db) == [1, 2, 3, 4])

        let ordered = HPlayer.where { $0.score > 8 }.order(by: \.name).distinct().delete()
        #expect(ordered.sql == #"DELETE FROM "players" WHERE ("players"."score" > ?)"#)
    }

    @Test func sameShapeReusesThePreparedStatement() throws {
        let first = HPlayer.find(1).delete()
        let second = HPlayer.delete(HPlayer(id: 2, gameID: 1, name: "Bob", score: 7))
        #expect(first.sql == second.sql)
        let db = try makeGamesDatabase()
        try db.write { db in
            try first.execute(db)
            let cached = db.cachedStatementCount
            try second.execute(db)
            #expect(db.cachedStatementCount == cached)
        }
        #expect(try ids(db) == [3, 4])
    }
}
