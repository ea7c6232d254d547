import StrataQueries
import StrataSQLite
import Testing

/// Runs any statement the way generic code does: through the protocol, not `Insert`'s own type.
private func executeGenerically(_ statement: some QueryStatement, _ db: Database) throws {
    try statement.execute(db)
}

private func fetchAllGenerically<Statement: QueryStatement>(_ statement: Statement, _ db: Database) throws -> [Statement.QueryValue]
where Statement.QueryValue: QueryDecodable {
    try statement.fetchAll(db)
}

@Suite(.timeLimit(.minutes(5))) struct InsertBatchingThroughProtocolTests {
    /// 20,000 games of two columns: 40,000 bindings, over SQLite's 32,766 per statement.
    let games = (0..<20_000).map { HGame(id: 1_000 + $0, title: "Game \($0)") }

    @Test func insertRunThroughSomeQueryStatementIsBatched() throws {
        let db = try makeGamesDatabase()
        let insert = HGame.insert { games }
        #expect(insert.bindings.count > 32_766)
        let before = try db.read { try HGame.all.fetchCount($0) }
        try db.write { try executeGenerically(insert, $0) }
        #expect(try db.read { try HGame.all.fetchCount($0) } == before + games.count)
    }

    @Test func insertRunThroughAnyQueryStatementIsBatched() throws {
        let db = try makeGamesDatabase()
        let statement: any QueryStatement = HGame.insert { games }
        try db.write { try statement.execute($0) }
        #expect(try db.read { try HGame.where { $0.id.gte(1_000) }.fetchCount($0) } == games.count)
    }

    @Test func returningRowsThroughAGenericFunctionComeFromEveryBatch() throws {
        let db = try makeGamesDatabase()
        let ids = try db.write { try fetchAllGenerically(HGame.insert { games }.returning(\.id), $0) }
        #expect(ids == games.map(\.id))
    }

    @Test func batchesOfAGenericInsertStayAllOrNothing() throws {
        let db = try makeGamesDatabase()
        // The last row clashes with the first: the earlier batches are rolled back with it.
        let clashing = games + [HGame(id: 1_000, title: "Again")]
        #expect(throws: DatabaseError.self) { try db.write { try executeGenerically(HGame.insert { clashing }, $0) } }
        #expect(try db.read { try HGame.where { $0.id.gte(1_000) }.fetchCount($0) } == 0)
    }
}
