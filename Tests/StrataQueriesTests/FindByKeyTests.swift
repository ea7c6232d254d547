import Foundation
import StrataQueries
import StrataSQLite
import Testing

/// `find(id)` with a key value keeps the key until its SQL is needed, and a bare
/// `find(id).fetchOne(db)` runs the table's prepared by-key statement. Everything else must
/// stay exactly what the expression overload builds.
@Suite(.timeLimit(.minutes(5))) struct FindByKeyTests {
    @Test func aKeyValueBuildsTheSameStatementAsAnExpression() {
        let byValue = HPlayer.find(2)
        let byExpression = HPlayer.find(SQLQueryExpression<Int>(QueryFragment(binding: .integer(2))))
        #expect(byValue.sql == byExpression.sql)
        #expect(byValue.bindings == byExpression.bindings)
        #expect(
            byValue.sql
                == #"SELECT "players"."id", "players"."gameID", "players"."name", "players"."score", "players"."nickname" FROM "players" WHERE ("players"."id" = ?)"#
        )
        #expect(byValue.bindings == [.integer(2)])
    }

    @Test func aBareLookupFetchesTheRowOrNil() throws {
        let db = try makeGamesDatabase()
        #expect(try db.read { try HPlayer.find(2).fetchOne($0) } == HPlayer(id: 2, gameID: 1, name: "Bob", score: 7, nickname: "B"))
        #expect(try db.read { try HPlayer.find(99).fetchOne($0) } == nil)
        #expect(try db.read { try HGame.find(3).fetchOne($0) } == HGame(id: 3, title: "Hearts"))
    }

    /// Clauses added after `find` keep the key condition first and take the built path.
    @Test func clausesAfterFindKeepTheKeyCondition() throws {
        let db = try makeGamesDatabase()
        let filtered = HPlayer.find(1).where { $0.score > 100 }
        #expect(filtered.sql.hasSuffix(#"WHERE ("players"."id" = ?) AND ("players"."score" > ?)"#))
        #expect(filtered.bindings == [.integer(1), .integer(100)])
        #expect(try db.read { try filtered.fetchOne($0) } == nil)
        #expect(try db.read { try HPlayer.find(1).where { $0.score > 10 }.fetchOne($0) }?.name == "Ann")
        #expect(try db.read { try HPlayer.find(4).select(\.name).fetchOne($0) } == "Dee")
        #expect(try db.read { try HPlayer.find(4).limit(1, offset: 1).fetchOne($0) } == nil)
        #expect(try db.read { try HPlayer.find(4).distinct().fetchOne($0) }?.name == "Dee")
        #expect(try db.read { try HPlayer.find(4).fetchAll($0) }.map(\.name) == ["Dee"])
        #expect(try db.read { try HPlayer.find(4).fetchCount($0) } == 1)
        let joined = try db.read { db in
            try HPlayer.find(3).join(HGame.all) { $0.gameID.eq($1.id) }.fetchOne(db)
        }
        #expect(joined?.1.title == "Go")
    }

    @Test func writesFromFindUseTheKey() throws {
        let db = try makeGamesDatabase()
        try db.write { db in
            try HPlayer.find(2).update { $0.score = 70 }.execute(db)
            try HPlayer.find(3).delete().execute(db)
        }
        #expect(try db.read { try HPlayer.find(2).fetchOne($0) }?.score == 70)
        #expect(try db.read { try HPlayer.find(3).fetchOne($0) } == nil)
        #expect(try db.read { try HPlayer.all.fetchCount($0) } == 3)
    }

    /// The by-key statement names the table's schema, as the built select does.
    @Test func aBareLookupReadsTheTablesSchema() throws {
        let db = try makeAttachedDatabase()
        #expect(try db.read { try SyncCounter.find(1).fetchOne($0) } == SyncCounter(id: 1, inserts: 0))
        #expect(try db.read { try SyncedEntity.find(2).fetchOne($0) } == SyncedEntity(id: 2, name: "Bob"))
    }

    /// Through the protocol (`some QueryStatement`, what `FetchOne` holds) the built path runs
    /// and agrees.
    @Test func throughTheProtocolTheBuiltPathAgrees() throws {
        let db = try makeGamesDatabase()
        func first<S: QueryStatement>(_ statement: S, _ db: Database) throws -> S.QueryValue? where S.QueryValue: QueryDecodable {
            try statement.fetchOne(db)
        }
        let viaProtocol = try db.read { try first(HPlayer.find(2), $0) }
        let direct = try db.read { try HPlayer.find(2).fetchOne($0) }
        #expect(viaProtocol == direct)
        #expect(direct != nil)
    }

    /// A bare lookup, through a by-key statement already prepared, still reports the table it
    /// read: observation depends on it.
    @Test func aBareLookupRecordsItsReadRegion() throws {
        let db = try makeGamesDatabase()
        let region = try db.read { db in
            _ = try HPlayer.find(2).fetchOne(db)
            return try db.recordingReadRegion { try HPlayer.find(1).fetchOne(db) }.region
        }
        #expect(region.tables.contains { $0.name == "players" })
        #expect(!region.tables.contains { $0.name == "games" })
    }
}
