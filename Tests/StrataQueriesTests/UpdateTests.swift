import Foundation
import StrataQueries
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct UpdateTests {
    func scores(_ db: DatabaseQueue) throws -> [Int] {
        try db.read { try HPlayer.order(by: \.id).select(\.score).fetchAll($0) }
    }

    @Test func incrementsEveryRow() throws {
        let update = HPlayer.update { $0.score += 1 }
        #expect(update.sql == #"UPDATE "players" SET "score" = ("players"."score" + ?)"#)
        #expect(update.bindings == [.integer(1)])
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try scores(db) == [13, 8, 4, 10])
    }

    @Test func incrementsAFoundRow() throws {
        let update = HPlayer.find(2).update { $0.score += 1 }
        #expect(update.sql == #"UPDATE "players" SET "score" = ("players"."score" + ?) WHERE ("players"."id" = ?)"#)
        #expect(update.bindings == [.integer(1), .integer(2)])
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try scores(db) == [12, 8, 3, 9])
    }

    @Test func incrementsAFilteredSet() throws {
        let update = HPlayer.where { $0.gameID.eq(1) }.where { $0.score < 10 }.update { $0.score += 1 }
        #expect(
            update.sql
                == #"UPDATE "players" SET "score" = ("players"."score" + ?) WHERE ("players"."gameID" = ?) AND ("players"."score" < ?)"#)
        #expect(update.bindings == [.integer(1), .integer(1), .integer(10)])
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try scores(db) == [12, 8, 3, 10])
    }

    @Test func setsSeveralColumnsOfAFoundRow() throws {
        let update = HPlayer.find(3).update {
            $0.score = 0
            $0.name = "x"
        }
        #expect(update.sql == #"UPDATE "players" SET "score" = ?, "name" = ? WHERE ("players"."id" = ?)"#)
        #expect(update.bindings == [.integer(0), .text("x"), .integer(3)])
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try db.read { try HPlayer.find(3).fetchOne($0) } == HPlayer(id: 3, gameID: 2, name: "x", score: 0))
    }

    @Test func setsNullAndOptionalValues() throws {
        let clear = HPlayer.find(2).update { $0.nickname = nil }
        #expect(clear.sql == #"UPDATE "players" SET "nickname" = ? WHERE ("players"."id" = ?)"#)
        #expect(clear.bindings == [.null, .integer(2)])

        let nickname: String? = "Cee"
        let set = HPlayer.find(3).update { $0.nickname = nickname }
        #expect(set.bindings == [.text("Cee"), .integer(3)])
        let literal = HPlayer.find(1).update { $0.nickname = "A" }
        #expect(literal.bindings == [.text("A"), .integer(1)])

        let db = try makeGamesDatabase()
        try db.write { db in
            try clear.execute(db)
            try set.execute(db)
            try literal.execute(db)
        }
        #expect(try db.read { try HPlayer.order(by: \.id).select(\.nickname).fetchAll($0) } == ["A", nil, "Cee", nil])

        let fromExpression = HPlayer.find(4).update { $0.nickname = $0.name.lower() }
        #expect(fromExpression.sql == #"UPDATE "players" SET "nickname" = lower("players"."name") WHERE ("players"."id" = ?)"#)
        let fromColumn = HPlayer.find(3).update { $0.nickname = HPlayer.columns.name }
        #expect(fromColumn.sql == #"UPDATE "players" SET "nickname" = "players"."name" WHERE ("players"."id" = ?)"#)
        let fromOptional = HPlayer.find(1).update { $0.nickname = $0.nickname.ifnull(Optional("?")) }
        #expect(fromOptional.sql == #"UPDATE "players" SET "nickname" = ifnull("players"."nickname", ?) WHERE ("players"."id" = ?)"#)
        try db.write { db in
            try fromExpression.execute(db)
            try fromColumn.execute(db)
        }
        #expect(try db.read { try HPlayer.order(by: \.id).select(\.nickname).fetchAll($0) } == ["A", nil, "Cid", "dee"])
    }

    @Test func assignsExpressions() throws {
        let update = HPlayer.find(1).update {
            $0.score = $0.score * 2
            $0.name = $0.name.upper()
            $0.nickname = $0.nickname.ifnull(Optional("none"))
        }
        #expect(
            update.sql
                == #"UPDATE "players" SET "score" = ("players"."score" * ?), "name" = upper("players"."name"), "nickname" = ifnull("players"."nickname", ?) WHERE ("players"."id" = ?)"#
        )
        #expect(update.bindings == [.integer(2), .text("none"), .integer(1)])
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try db.read { try HPlayer.find(1).fetchOne($0) } == HPlayer(id: 1, gameID: 1, name: "ANN", score: 24, nickname: "none"))
    }

    @Test func assignsRawSQLExpressions() throws {
        let update = HPlayer.find(1).update {
            $0.name = SQLQueryExpression("'Dr. ' || \($0.name)")
            $0.score = SQLQueryExpression("length(\($0.name)) + \(bind: 100)")
        }
        #expect(
            update.sql
                == #"UPDATE "players" SET "name" = 'Dr. ' || "players"."name", "score" = length(('Dr. ' || "players"."name")) + ? WHERE ("players"."id" = ?)"#
        )
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try db.read { try HPlayer.find(1).fetchOne($0) } == HPlayer(id: 1, gameID: 1, name: "Dr. Ann", score: 107))
    }

    @Test func compoundAssignments() throws {
        let update = HPlayer.find(4).update {
            $0.score -= 4
            $0.score *= 3
            $0.gameID = 2
            $0.name += "!"
        }
        #expect(
            update.sql
                == #"UPDATE "players" SET "score" = (("players"."score" - ?) * ?), "gameID" = ?, "name" = ("players"."name" || ?) WHERE ("players"."id" = ?)"#
        )
        #expect(update.bindings == [.integer(4), .integer(3), .integer(2), .text("!"), .integer(4)])
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try db.read { try HPlayer.find(4).fetchOne($0) } == HPlayer(id: 4, gameID: 2, name: "Dee!", score: 15))

        let halve = HPlayer.update { $0.score /= 2 }
        #expect(halve.sql == #"UPDATE "players" SET "score" = ("players"."score" / ?)"#)
    }

    @Test func assigningAColumnTwiceKeepsOneAssignment() throws {
        let update = HPlayer.update {
            $0.score = 1
            $0.name = "n"
            $0.score = 2
        }
        #expect(update.sql == #"UPDATE "players" SET "score" = ?, "name" = ?"#)
        #expect(update.bindings == [.integer(2), .text("n")])
    }

    @Test func updateWhereAfterTheFact() throws {
        let update = HPlayer.update { $0.score = 0 }.where { $0.gameID.eq(2) }.where { $0.nickname.is(nil) }
        #expect(update.sql == #"UPDATE "players" SET "score" = ? WHERE ("players"."gameID" = ?) AND ("players"."nickname" IS NULL)"#)
        let db = try makeGamesDatabase()
        try db.write { try update.execute($0) }
        #expect(try scores(db) == [12, 7, 0, 9])
    }

    @Test func updatesARecordByItsKey() throws {
        var bob = HPlayer(id: 2, gameID: 1, name: "Bob", score: 7, nickname: "B")
        bob.score = 70
        bob.nickname = nil
        let update = HPlayer.update(bob)
        #expect(update.sql == #"UPDATE "players" SET "gameID" = ?, "name" = ?, "score" = ?, "nickname" = ? WHERE ("players"."id" = ?)"#)
        #expect(update.bindings == [.integer(1), .text("Bob"), .integer(70), .null, .integer(2)])
        let db = try makeGamesDatabase()
        let changes = try db.write { db in
            try update.execute(db)
            return db.changesCount
        }
        #expect(changes == 1)
        #expect(try db.read { try HPlayer.find(2).fetchOne($0) } == bob)

        let missing = try db.write { db in
            try HPlayer.update(HPlayer(id: 99, gameID: 1, name: "Ghost", score: 0)).execute(db)
            return db.changesCount
        }
        #expect(missing == 0)
    }

    @Test func updateOrIgnoreSkipsConflictingRows() throws {
        let db = try makeGamesDatabase()
        try db.write { try $0.execute(sql: "CREATE UNIQUE INDEX playerNames ON players(name)") }
        let update = HPlayer.update(or: .ignore) { $0.name = "Ann" }.where { $0.id.eq(2) }
        #expect(update.sql == #"UPDATE OR IGNORE "players" SET "name" = ? WHERE ("players"."id" = ?)"#)
        try db.write { try update.execute($0) }
        #expect(try db.read { try HPlayer.find(2).select(\.name).fetchOne($0) } == "Bob")

        let replace = HPlayer.find(2).update(or: .replace) { $0.name = "Ann" }
        #expect(replace.sql == #"UPDATE OR REPLACE "players" SET "name" = ? WHERE ("players"."id" = ?)"#)
        try db.write { try replace.execute($0) }
        #expect(try db.read { try HPlayer.order(by: \.id).select(\.name).fetchAll($0) } == ["Ann", "Cid", "Dee"])
    }

    @Test func constraintViolationIsADatabaseErrorNamingTheSQL() throws {
        let db = try makeGamesDatabase()
        let update = HPlayer.find(1).update { $0.gameID = 99 }
        let error = #expect(throws: DatabaseError.self) { try db.write { try update.execute($0) } }
        #expect(error?.resultCode == .constraint)
        #expect(error?.sql == update.sql)
        #expect(try db.read { try HPlayer.find(1).select(\.gameID).fetchOne($0) } == 1)
    }

    @Test func noAssignmentsThrowsAndRunsNothing() throws {
        let db = try makeGamesDatabase()
        let update = HPlayer.update { _ in }
        let error = #expect(throws: DatabaseError.self) { try db.write { try update.execute($0) } }
        #expect(error?.resultCode == .misuse)
        #expect(error?.message == #"UPDATE "players" has no assignments"#)
        #expect(throws: DatabaseError.self) { try db.write { try HPlayer.find(1).update { _ in }.returning(\.id).fetchAll($0) } }
        #expect(try scores(db) == [12, 7, 3, 9])
    }

    @Test func selectsWithLimitsOrGroupsCannotBecomeUpdates() throws {
        let db = try makeGamesDatabase()
        let limited = HPlayer.order { $0.score.desc() }.limit(1).update { $0.score = 0 }
        let error = #expect(throws: DatabaseError.self) { try db.write { try limited.execute($0) } }
        #expect(error?.resultCode == .misuse)
        #expect(error?.message.contains("LIMIT/OFFSET") == true)
        #expect(throws: DatabaseError.self) {
            try db.write { try HPlayer.group(by: \.gameID).update { $0.score = 0 }.execute($0) }
        }
        #expect(try scores(db) == [12, 7, 3, 9])

        // Ordering and the selected columns do not change which rows match: dropped.
        let ordered = HPlayer.where { $0.score > 8 }.order(by: \.name).select(\.name).update { $0.score = 0 }
        #expect(ordered.sql == #"UPDATE "players" SET "score" = ? WHERE ("players"."score" > ?)"#)
    }

    @Test func sameShapeReusesThePreparedStatement() throws {
        let first = HPlayer.find(1).update { $0.score = 100 }
        let second = HPlayer.find(2).update { $0.score = 200 }
        #expect(first.sql == second.sql)
        #expect(first.bindings != second.bindings)
        let db = try makeGamesDatabase()
        try db.write { db in
            try first.execute(db)
            let cached = db.cachedStatementCount
            try second.execute(db)
            #expect(db.cachedStatementCount == cached)
        }
        #expect(try scores(db) == [100, 200, 3, 9])
    }
}
