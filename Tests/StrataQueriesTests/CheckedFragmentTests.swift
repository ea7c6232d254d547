import StrataQueries
import StrataSQLite
import Testing

// Statements whose body cannot be built throw a StatementBuildError when run; none of them
// becomes SQL that silently does something else.
@Suite(.timeLimit(.minutes(5))) struct CheckedFragmentTests {
    @Test func triggerWhoseStepFailsToEncodeThrows() throws {
        let db = try makeGamesDatabase()
        let trigger = HPlayer.createTemporaryTrigger("refused", after: .delete) { _ in
            HRefusingGame.delete(HRefusingGame(id: 1))
        }
        let error = #expect(throws: StatementBuildError.self) {
            try db.writeWithoutTransaction { try trigger.execute($0) }
        }
        #expect(error?.tableName == "players")
        #expect(error?.underlying is EncodingRefused)
        #expect(error?.description.contains("temporary trigger after DELETE on \"players\"") == true)
        let triggers = try db.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_temp_master WHERE type = 'trigger'") }
        #expect(triggers == 0)
    }

    @Test func triggerWhoseStepHasNoAssignmentsThrows() throws {
        let trigger = HPlayer.createTemporaryTrigger(
            after: .insert,
            forEachRow: { _ in
                [HPlayer.all.select(\.id), HGame.update { _ in }]
            })
        let db = try makeGamesDatabase()
        let error = #expect(throws: StatementBuildError.self) {
            try db.writeWithoutTransaction { try trigger.execute($0) }
        }
        #expect(error?.statement.contains("step 2") == true)
        #expect((error?.underlying as? DatabaseError)?.resultCode == .misuse)
    }

    @Test func viewWhoseSelectFailsThrows() throws {
        let view = HGameRow.createTemporaryView(as: HPlayer.limit(1).delete().returning { ($0.gameID, $0.name, $0.score) })
        let db = try makeGamesDatabase()
        let playerCount = try db.read { try HPlayer.all.fetchCount($0) }
        let error = #expect(throws: StatementBuildError.self) {
            try db.writeWithoutTransaction { try view.execute($0) }
        }
        #expect(error?.tableName == "gameRows")
        #expect(try db.read { try HPlayer.all.fetchCount($0) } == playerCount)
    }

    @Test func unencodableRecordNeverBecomesASilentWrite() throws {
        let delete = HRefusingGame.delete(HRefusingGame(id: 1))
        let update = HRefusingGame.update(HRefusingGame(id: 1))
        #expect(!delete.sql.contains("WHERE 0"))
        #expect(!update.sql.contains("WHERE 0"))
        let db = try makeGamesDatabase()
        #expect(throws: EncodingRefused()) { try db.write { try delete.execute($0) } }
        #expect(throws: EncodingRefused()) { try db.write { try update.execute($0) } }
        // Even run as plain text, the statement fails instead of writing nothing.
        #expect(throws: DatabaseError.self) { try db.write { try $0.execute(sql: delete.sql) } }
        #expect(throws: DatabaseError.self) { try db.write { try $0.execute(sql: update.sql) } }
    }

    @Test func withWhoseQueryFailsThrows() throws {
        let query = With(Player.all.select { HighScorer.Columns(playerID: $0.id, score: $0.score) }) {
            HRefusingGame.delete(HRefusingGame(id: 1))
        }
        let db = try makeGamesDatabase()
        #expect(throws: EncodingRefused()) { try db.write { try query.execute($0) } }
    }
}
