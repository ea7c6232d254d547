import Foundation
import StrataSQLite
import Testing

@testable import StrataQueries

/// The players table's full column list, as every record insert writes it.
let playerColumnList = #"("id", "gameID", "name", "score", "nickname")"#

/// A table whose records encode one value too few: an insert of it must throw, not run.
struct HBrokenGame: PrimaryKeyedTable {
    var id: Int
    var title: String
    struct TableColumns: PrimaryKeyedTableDefinition {
        typealias QueryValue = HBrokenGame
        typealias PrimaryKey = Int
        let id = TableColumn<HBrokenGame, Int>("id")
        let title = TableColumn<HBrokenGame, String>("title")
        var primaryKey: TableColumn<HBrokenGame, Int> { id }
        static var allColumns: [any TableColumnExpression] { [TableColumns().id, TableColumns().title] }
    }
    struct Draft: TableDraft {
        typealias PrimaryTable = HBrokenGame
        var id: Int?
        var title: String
        func encodeColumns(to columns: inout ColumnEncoder) throws { columns.append(id) }
    }
    static let columns = TableColumns()
    static let tableName = "games"
    static let columnNames = ["id", "title"]
    init(id: Int, title: String) { self.id = id; self.title = title }
    init(decoder: inout QueryDecoder) throws {
        id = try decoder.decode(Int.self)
        title = try decoder.decode(String.self)
    }
    func encodeColumns(to columns: inout ColumnEncoder) throws { columns.append(id) }
}

/// A record whose encoding throws its own error.
struct EncodingRefused: Error, Equatable {}

struct HRefusingGame: PrimaryKeyedTable {
    var id: Int
    struct TableColumns: PrimaryKeyedTableDefinition {
        typealias QueryValue = HRefusingGame
        typealias PrimaryKey = Int
        let id = TableColumn<HRefusingGame, Int>("id")
        var primaryKey: TableColumn<HRefusingGame, Int> { id }
        static var allColumns: [any TableColumnExpression] { [TableColumns().id] }
    }
    struct Draft: TableDraft {
        typealias PrimaryTable = HRefusingGame
        var id: Int?
        func encodeColumns(to columns: inout ColumnEncoder) throws { throw EncodingRefused() }
    }
    static let columns = TableColumns()
    static let tableName = "games"
    static let columnNames = ["id"]
    init(id: Int) { self.id = id }
    init(decoder: inout QueryDecoder) throws { id = try decoder.decode(Int.self) }
    func encodeColumns(to columns: inout ColumnEncoder) throws { throw EncodingRefused() }
}

@Suite(.timeLimit(.minutes(5))) struct InsertTests {
    @Test func insertsOneRecord() throws {
        let insert = HPlayer.insert { HPlayer(id: 5, gameID: 2, name: "Eve", score: 4, nickname: "E") }
        #expect(insert.sql == #"INSERT INTO "players" "# + playerColumnList + #" VALUES (?, ?, ?, ?, ?)"#)
        #expect(insert.bindings == [.integer(5), .integer(2), .text("Eve"), .integer(4), .text("E")])

        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        let eve = try db.read { try HPlayer.find(5).fetchOne($0) }
        #expect(eve == HPlayer(id: 5, gameID: 2, name: "Eve", score: 4, nickname: "E"))
    }

    @Test func insertsSeveralRecordsInOneValuesList() throws {
        let eve = HPlayer(id: 5, gameID: 2, name: "Eve", score: 4)
        let fay = HPlayer(id: 6, gameID: 3, name: "Fay", score: 1, nickname: "F")
        let lines = HPlayer.insert {
            eve
            fay
        }
        let array = HPlayer.insert { [eve, fay] }
        let expected = #"INSERT INTO "players" "# + playerColumnList + #" VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)"#
        #expect(lines.sql == expected)
        #expect(array.sql == expected)
        #expect(lines.bindings == array.bindings)
        #expect(
            lines.bindings == [
                .integer(5), .integer(2), .text("Eve"), .integer(4), .null,
                .integer(6), .integer(3), .text("Fay"), .integer(1), .text("F"),
            ])

        let db = try makeGamesDatabase()
        try db.write { try lines.execute($0) }
        let names = try db.read { try HPlayer.where { $0.id.gt(4) }.order(by: \.id).select(\.name).fetchAll($0) }
        #expect(names == ["Eve", "Fay"])
    }

    @Test func builderTakesConditionsAndLoops() throws {
        let include = false
        let insert = HGame.insert {
            HGame(id: 4, title: "Poker")
            if include { HGame(id: 5, title: "Skipped") }
            for id in 6...7 { HGame(id: id, title: "Game \(id)") }
        }
        #expect(insert.sql == #"INSERT INTO "games" ("id", "title") VALUES (?, ?), (?, ?), (?, ?)"#)
        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        #expect(try db.read { try HGame.order(by: \.id).select(\.id).fetchAll($0) } == [1, 2, 3, 4, 6, 7])
    }

    @Test func draftGetsAKeyFromSQLite() throws {
        let insert = HPlayer.insert { HPlayer.Draft(gameID: 2, name: "Eve") }
        #expect(insert.sql == #"INSERT INTO "players" "# + playerColumnList + #" VALUES (?, ?, ?, ?, ?)"#)
        #expect(insert.bindings == [.null, .integer(2), .text("Eve"), .integer(0), .null])

        let db = try makeGamesDatabase()
        let rowID = try db.write { db in
            try insert.execute(db)
            return db.lastInsertedRowID
        }
        #expect(rowID == 5)
        #expect(try db.read { try HPlayer.find(5).fetchOne($0) } == HPlayer(id: 5, gameID: 2, name: "Eve", score: 0))
    }

    @Test func draftsWithAndWithoutKeys() throws {
        let db = try makeGamesDatabase()
        try db.write { db in
            try HPlayer.insert {
                HPlayer.Draft(id: 10, gameID: 1, name: "Ten")
                HPlayer.Draft(gameID: 1, name: "Next")
            }.execute(db)
        }
        let rows = try db.read { try HPlayer.where { $0.id.gte(10) }.order(by: \.id).select { ($0.id, $0.name) }.fetchAll($0) }
        #expect(rows.map(\.0) == [10, 11])
        #expect(rows.map(\.1) == ["Ten", "Next"])
    }

    @Test func insertsChosenColumns() throws {
        let insert = HPlayer.insert {
            ($0.gameID, $0.name)
        } values: {
            (2, "Fay")
            (3, "Gus")
        }
        #expect(insert.sql == #"INSERT INTO "players" ("gameID", "name") VALUES (?, ?), (?, ?)"#)
        #expect(insert.bindings == [.integer(2), .text("Fay"), .integer(3), .text("Gus")])

        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        let rows = try db.read { try HPlayer.where { $0.id.gt(4) }.order(by: \.id).fetchAll($0) }
        #expect(rows == [HPlayer(id: 5, gameID: 2, name: "Fay", score: 0), HPlayer(id: 6, gameID: 3, name: "Gus", score: 0)])
    }

    @Test func insertsOneChosenColumn() throws {
        let insert = HGame.insert {
            $0.title
        } values: {
            "Poker"
            ["Bridge", "Whist"]
        }
        #expect(insert.sql == #"INSERT INTO "games" ("title") VALUES (?), (?), (?)"#)
        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        #expect(
            try db.read { try HGame.order(by: \.id).select(\.title).fetchAll($0) } == ["Chess", "Go", "Hearts", "Poker", "Bridge", "Whist"])
    }

    @Test func insertsOptionalColumnValues() throws {
        let insert = HPlayer.insert {
            ($0.gameID, $0.name, $0.nickname)
        } values: {
            (1, "Hal", "H")
            (1, "Ivy", nil)
        }
        #expect(insert.bindings == [.integer(1), .text("Hal"), .text("H"), .integer(1), .text("Ivy"), .null])
        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        #expect(try db.read { try HPlayer.where { $0.id.gt(4) }.order(by: \.id).select(\.nickname).fetchAll($0) } == ["H", nil])
    }

    @Test func insertsTheRowsOfASelect() throws {
        let insert = HPlayer.insert {
            ($0.gameID, $0.name)
        } select: {
            HGame.where { $0.id.gt(1) }.select { ($0.id, $0.title) }
        }
        #expect(
            insert.sql
                == #"INSERT INTO "players" ("gameID", "name") SELECT "games"."id", "games"."title" FROM "games" WHERE ("games"."id" > ?)"#)
        #expect(insert.bindings == [.integer(1)])

        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        let rows = try db.read { try HPlayer.where { $0.id.gt(4) }.order(by: \.id).select { ($0.gameID, $0.name) }.fetchAll($0) }
        #expect(rows.map(\.0) == [2, 3])
        #expect(rows.map(\.1) == ["Go", "Hearts"])
    }

    @Test func insertOrIgnoreSkipsConflictingRows() throws {
        let insert = HPlayer.insert(or: .ignore) {
            HPlayer(id: 1, gameID: 2, name: "Not Ann", score: 0)
            HPlayer(id: 9, gameID: 2, name: "Nia", score: 1)
        }
        #expect(insert.sql == #"INSERT OR IGNORE INTO "players" "# + playerColumnList + #" VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)"#)

        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        #expect(try db.read { try HPlayer.find(1).select(\.name).fetchOne($0) } == "Ann")
        #expect(try db.read { try HPlayer.find(9).select(\.name).fetchOne($0) } == "Nia")
    }

    @Test func insertOrReplaceOverwritesConflictingRows() throws {
        let insert = HPlayer.insert(or: .replace) { HPlayer(id: 1, gameID: 2, name: "New Ann", score: 0) }
        #expect(insert.sql.hasPrefix(#"INSERT OR REPLACE INTO "players" "#))
        let db = try makeGamesDatabase()
        try db.write { try insert.execute($0) }
        #expect(try db.read { try HPlayer.find(1).fetchOne($0) } == HPlayer(id: 1, gameID: 2, name: "New Ann", score: 0))
        #expect(try db.read { try HPlayer.fetchCount($0) } == 4)
    }

    @Test func constraintViolationIsADatabaseErrorNamingTheSQL() throws {
        let db = try makeGamesDatabase()
        let duplicate = HPlayer.insert { HPlayer(id: 1, gameID: 1, name: "Twin", score: 0) }
        do {
            try db.write { try duplicate.execute($0) }
            Issue.record("expected a constraint violation")
        } catch let error as DatabaseError {
            #expect(error.resultCode == .constraint)
            #expect(error.sql == duplicate.sql)
            #expect(error.message.contains("players.id"))
        }

        let orphan = HPlayer.insert { HPlayer.Draft(gameID: 99, name: "Orphan") }
        let error = #expect(throws: DatabaseError.self) { try db.write { try orphan.execute($0) } }
        #expect(error?.resultCode == .constraint)
        #expect(error?.sql == orphan.sql)
        #expect(try db.read { try HPlayer.fetchCount($0) } == 4)
    }

    @Test func zeroRowsExecuteNothing() throws {
        let none: [HPlayer] = []
        let insert = HPlayer.insert { none }
        #expect(insert.isEmpty)
        #expect(insert.sql == "")
        #expect(insert.bindings == [])

        let db = try makeGamesDatabase()
        try db.write { db in
            let changesBefore = db.totalChangesCount
            try insert.execute(db)
            try HPlayer.insert {
                ($0.gameID, $0.name)
            } values: {
                [(Int, String)]()
            }.execute(db)
            #expect(try insert.returning(\.id).fetchAll(db) == [])
            #expect(try insert.returning(\.id).fetchOne(db) == nil)
            #expect(db.totalChangesCount == changesBefore)
        }
        #expect(try db.read { try HPlayer.fetchCount($0) } == 4)
    }

    @Test func recordsThatEncodeBadlyThrowBeforeRunning() throws {
        let db = try makeGamesDatabase()
        let short = HBrokenGame.insert { HBrokenGame(id: 8, title: "Short") }
        let error = #expect(throws: DatabaseError.self) { try db.write { try short.execute($0) } }
        #expect(error?.resultCode == .misuse)
        #expect(error?.message.contains("1 value(s) for 2 column(s)") == true)
        #expect(throws: DatabaseError.self) { try db.write { try HBrokenGame.insert { HBrokenGame.Draft(title: "Short") }.execute($0) } }

        #expect(throws: EncodingRefused()) { try db.write { try HRefusingGame.insert { HRefusingGame(id: 8) }.execute($0) } }
        #expect(throws: EncodingRefused()) {
            try db.write { try HRefusingGame.insert { HRefusingGame(id: 8) }.returning(\.id).fetchAll($0) }
        }
        #expect(try db.read { try HGame.fetchCount($0) } == 3)
    }

    @Test func sameShapeReusesThePreparedStatement() throws {
        let first = HPlayer.insert { HPlayer.Draft(gameID: 1, name: "One") }
        let second = HPlayer.insert { HPlayer.Draft(gameID: 2, name: "Two", score: 5, nickname: "2") }
        #expect(first.sql == second.sql)
        #expect(first.bindings != second.bindings)

        let db = try makeGamesDatabase()
        try db.write { db in
            try first.execute(db)
            let cached = db.cachedStatementCount
            try second.execute(db)
            #expect(db.cachedStatementCount == cached)
            #expect(try db.cachedStatement(sql: first.sql).sql == first.sql)
        }
        #expect(try db.read { try HPlayer.fetchCount($0) } == 6)
    }
}

@Suite(.timeLimit(.minutes(5))) struct InsertBatchTests {
    @Test func manyRowsAreSplitUnderTheBindingLimitAndStayAllOrNothing() throws {
        let db = try makeGamesDatabase()
        let limit = try db.read { $0.maximumBindingCount }
        // Five values a row: enough rows for three statements.
        let count = limit / 5 * 2 + 10
        let drafts = (0..<count).map { HPlayer.Draft(gameID: 1, name: "P\($0)", score: $0) }
        let insert = HPlayer.insert { drafts }
        #expect(try insert.batches(limit: limit).count == 3)
        try db.write { try insert.execute($0) }
        #expect(try db.read { try HPlayer.fetchCount($0) } == 4 + count)

        // A conflict in the last batch rolls back the earlier ones.
        var clashing = (0..<count).map { HPlayer.Draft(id: 10_000_000 + $0, gameID: 1, name: "Q\($0)") }
        clashing[count - 1].id = 1
        #expect(throws: DatabaseError.self) { try db.write { try HPlayer.insert { clashing }.execute($0) } }
        #expect(try db.read { try HPlayer.fetchCount($0) } == 4 + count)
    }

    @Test func returningGathersEveryBatch() throws {
        let db = try makeGamesDatabase()
        let limit = try db.read { $0.maximumBindingCount }
        let count = limit / 5 + 3
        let drafts = (0..<count).map { HPlayer.Draft(gameID: 2, name: "R\($0)") }
        let ids = try db.write { try HPlayer.insert { drafts }.returning(\.id).fetchAll($0) }
        #expect(ids.count == count)
        #expect(Set(ids).count == count)
    }
}
