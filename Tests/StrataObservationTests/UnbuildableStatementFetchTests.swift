import StrataObservation
import StrataQueries
import StrataSQLite
import StrataTestSupport
import Testing

// A wrapper over a statement that cannot be built reports why in `loadError`, instead of
// observing SQL that reads something else.
@Suite(.timeLimit(.minutes(5))) struct UnbuildableStatementFetchTests {
    /// A delete that refuses to drop the select's LIMIT: it cannot be built.
    var unbuildable: Delete<TypedPlayer, TypedPlayer> { TypedPlayer.limit(1).delete().returning { $0 } }

    @Test func fetchAllRequestOfAnUnbuildableStatementThrows() {
        #expect(throws: StatementBuildError.self) { try FetchAllRequest<TypedPlayer>(unbuildable) }
    }

    @Test func fetchAllOfAnUnbuildableStatementReportsItsError() throws {
        let database = try TemporaryPool()
        @FetchAll(unbuildable, database: database.pool) var players
        #expect(players.isEmpty)
        #expect($players.loadError is StatementBuildError)
    }

    @Test func fetchOneOfAnUnbuildableStatementReportsItsError() throws {
        let database = try TemporaryPool()
        @FetchOne(unbuildable, database: database.pool) var player: TypedPlayer?
        #expect(player == nil)
        #expect($player.loadError is StatementBuildError)
    }
}
