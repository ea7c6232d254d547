import Foundation
import StrataObservation
import StrataQueries
import StrataSQLite
import StrataTestSupport
import Testing

/// The observation tests' `players` table, declared with `@Table`.
@Table("players") struct TypedPlayer: Identifiable, Equatable, Hashable {
    let id: Int64
    var gameID: Int64?
    var name = ""
    var score = 0
}

@Suite(.timeLimit(.minutes(5))) struct FetchStatementTests {
    @Test func fetchAllOfAStatementStaysFresh() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        @FetchAll(TypedPlayer.where { $0.score > 5 }.order { $0.score.desc() }, database: pool) var players
        #expect(players.isEmpty)
        var values = $players.values.makeAsyncIterator()
        _ = await values.next()
        try await pool.write { db in
            try TypedPlayer(id: 1, name: "Low", score: 1).insert(db)
            try TypedPlayer(id: 2, name: "High", score: 9).insert(db)
        }
        #expect(await values.next()?.map(\.name) == ["High"])

        try await $players.load(TypedPlayer.order { $0.name })
        #expect(players.map(\.name) == ["High", "Low"])
    }

    @Test func fetchOneOfAnAggregateAndOfARecord() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        @FetchOne(TypedPlayer.count(), database: pool) var playerCount = 0
        @FetchOne(TypedPlayer.order { $0.score.desc() }.limit(1), database: pool) var leader: TypedPlayer?
        #expect(playerCount == 0)
        #expect(leader == nil)
        var counts = $playerCount.values.makeAsyncIterator()
        var leaders = $leader.values.makeAsyncIterator()
        _ = await counts.next()
        _ = await leaders.next()
        try await pool.write { db in try TypedPlayer(id: 1, name: "Blob", score: 4).insert(db) }
        #expect(await counts.next() == 1)
        #expect(await leaders.next() == TypedPlayer(id: 1, name: "Blob", score: 4))
    }
}
