import Foundation
import Observation
import StrataSQLite
import StrataTestSupport
import Testing

@testable import StrataObservation

@Suite(.timeLimit(.minutes(5))) struct FetchWrapperTests {
    @Test func fetchAllLoadsSynchronouslyThenStaysFresh() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        try await pool.write { db in try Player(id: 1, name: "Blob", score: 3).insert(db) }
        @FetchAll(sql: "SELECT * FROM players ORDER BY score DESC", database: pool) var players: [Player]
        #expect(players == [Player(id: 1, name: "Blob", score: 3)])
        #expect($players.loadError == nil)
        #expect($players.isLoading == false)

        var values = $players.values.makeAsyncIterator()
        #expect(await values.next() == players)
        try await pool.write { db in try Player(id: 2, name: "Blob Jr", score: 7).insert(db) }
        let fresh = await values.next()
        #expect(fresh?.map(\.name) == ["Blob Jr", "Blob"])
        #expect(players.map(\.name) == ["Blob Jr", "Blob"])
    }

    @Test func fetchAllOfATableRecord() async throws {
        let database = try makeGamesPool()
        @FetchAll(database: database.pool) var players: [Player]
        #expect(players.isEmpty)
        var values = $players.values.makeAsyncIterator()
        _ = await values.next()
        try await database.pool.write { db in try Player(id: 1, name: "Blob").insert(db) }
        #expect(await values.next() == [Player(id: 1, name: "Blob")])
    }

    @Test func fetchOneAggregateWithDefaultAndOptionalRecord() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        @FetchOne(sql: "SELECT count(*) FROM players", database: pool) var playerCount = 0
        @FetchOne(sql: "SELECT max(score) FROM players", database: pool) var topScore = -1
        @FetchOne(sql: "SELECT * FROM players ORDER BY score DESC LIMIT 1", database: pool) var leader: Player?
        #expect(playerCount == 0)
        #expect(topScore == -1)  // max() of no rows is NULL: the default applies
        #expect(leader == nil)

        var counts = $playerCount.values.makeAsyncIterator()
        var leaders = $leader.values.makeAsyncIterator()
        _ = await counts.next()
        _ = await leaders.next()
        try await pool.write { db in try Player(id: 1, name: "Blob", score: 9).insert(db) }
        #expect(await counts.next() == 1)
        #expect(await leaders.next() == Player(id: 1, name: "Blob", score: 9))
    }

    @Test func fetchRunsSeveralQueriesInOneTransaction() async throws {
        struct Scoreboard: FetchKeyRequest {
            struct Value: Sendable, Equatable {
                var names: [String] = []
                var total = 0
            }
            func fetch(_ db: Database) throws -> Value {
                Value(
                    names: try String.fetchAll(db, sql: "SELECT name FROM players ORDER BY name"),
                    total: try Int.fetchOne(db, sql: "SELECT coalesce(sum(score), 0) FROM players") ?? 0)
            }
        }
        let database = try makeGamesPool()
        @Fetch(Scoreboard(), database: database.pool) var scoreboard = Scoreboard.Value()
        var values = $scoreboard.values.makeAsyncIterator()
        #expect(await values.next() == Scoreboard.Value())
        try await database.pool.write { db in
            try Player(id: 1, name: "B", score: 2).insert(db)
            try Player(id: 2, name: "A", score: 3).insert(db)
        }
        #expect(await values.next() == Scoreboard.Value(names: ["A", "B"], total: 5))
    }

    @Test func loadSwitchesTheQuery() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        try await pool.write { db in
            try Player(id: 1, name: "Low", score: 1).insert(db)
            try Player(id: 2, name: "High", score: 10).insert(db)
        }
        @FetchAll(sql: "SELECT * FROM players WHERE score < 5", database: pool) var players: [Player]
        #expect(players.map(\.name) == ["Low"])

        let subscription = try await $players.load("SELECT * FROM players WHERE score >= \(5)")
        #expect(players.map(\.name) == ["High"])
        #expect(subscription.isActive)

        var values = $players.values.makeAsyncIterator()
        _ = await values.next()
        try await pool.write { db in try Player(id: 3, name: "Higher", score: 20).insert(db) }
        #expect(await values.next()?.map(\.name) == ["High", "Higher"])

        subscription.cancel()
        #expect(!subscription.isActive)
    }

    @Test func awaitingTheSubscriptionTaskTiesItToTheCaller() async throws {
        let database = try makeGamesPool()
        @FetchAll(sql: "SELECT * FROM players", database: database.pool) var players: [Player]
        let projected = $players
        let caller = Task {
            try await projected.load(sql: "SELECT * FROM players ORDER BY id").task
        }
        try await waitUntil { database.pool.changeHub.observerCount == 1 }
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        try await waitUntil { database.pool.changeHub.observerCount == 0 }
    }

    @Test func identicalObservationsShareOneUnderlyingObservation() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        let before = pool.changeHub.observerCount
        @FetchAll(sql: "SELECT * FROM players ORDER BY id", database: pool) var first: [Player]
        @FetchAll(sql: "SELECT * FROM players ORDER BY id", database: pool) var second: [Player]
        @FetchAll(sql: "SELECT * FROM players ORDER BY id DESC", database: pool) var other: [Player]
        try await waitUntil { pool.changeHub.observerCount == before + 2 }
        #expect(pool.changeHub.observerCount == before + 2)

        var firstValues = $first.values.makeAsyncIterator()
        var secondValues = $second.values.makeAsyncIterator()
        _ = await firstValues.next()
        _ = await secondValues.next()
        try await pool.write { db in try Player(id: 1, name: "Shared").insert(db) }
        #expect(await firstValues.next() == [Player(id: 1, name: "Shared")])
        #expect(await secondValues.next() == [Player(id: 1, name: "Shared")])
        _ = other
    }

    @Test func aFailingFetchSetsLoadErrorAndTheNextCommitRetries() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        @FetchAll(sql: "SELECT id, gameID, name, score FROM players WHERE score > (SELECT threshold FROM settings)", database: pool)
        var players: [Player]
        #expect($players.loadError is DatabaseError)
        #expect(players.isEmpty)

        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE settings (threshold INTEGER NOT NULL); INSERT INTO settings VALUES (0)")
            try Player(id: 1, name: "Blob", score: 1).insert(db)
        }
        var values = $players.values.makeAsyncIterator()
        let recovered = try await nextValue(&values, where: { !$0.isEmpty })
        #expect(recovered == [Player(id: 1, name: "Blob", score: 1)])
        #expect($players.loadError == nil)
    }

    @Test func worksInsideAnObservableModel() async throws {
        let database = try makeGamesPool()
        let model = PlayersModel(database: database.pool)
        #expect(model.players.isEmpty)

        let changed = AsyncStream<Void>.makeStream()
        withObservationTracking {
            _ = model.players
        } onChange: {
            changed.continuation.yield()
        }
        try await database.pool.write { db in try Player(id: 1, name: "Tracked").insert(db) }
        var iterator = changed.stream.makeAsyncIterator()
        await iterator.next()
        try await waitUntil { model.players == [Player(id: 1, name: "Tracked")] }
    }
}

@Observable final class PlayersModel: @unchecked Sendable {
    @ObservationIgnored @FetchAll var players: [Player]
    init(database: any DatabaseWriter) {
        _players = FetchAll(sql: "SELECT * FROM players ORDER BY id", database: database)
    }
}

@Suite(.timeLimit(.minutes(5))) struct FetchWrapperLifetimeTests {
    @Test func releasedWrappersLeaveNothingBehind() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        for index in 0..<1000 {
            // Different SQL each time, so every wrapper starts its own shared observation.
            let wrapper = FetchAll<Player>(sql: "SELECT * FROM players WHERE score > \(index)", database: pool)
            #expect(wrapper.wrappedValue.isEmpty)
        }
        #expect(pool.changeHub.observerCount == 0)
        #expect(SharedQueryObserverRegistry.shared.count(database: ObjectIdentifier(pool)) == 0)
    }
}

@Suite(.timeLimit(.minutes(5))) struct FetchWrapperFetchCountTests {
    struct CountingRequest: FetchKeyRequest {
        let counter: SharedCounter
        func fetch(_ db: Database) throws -> Int {
            counter.increment()
            return try Player.fetchCount(db)
        }
        static func == (lhs: Self, rhs: Self) -> Bool { lhs.counter === rhs.counter }
        func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(counter)) }
    }

    @Test func theInitialLoadSeedsTheObservationInsteadOfFetchingTwice() async throws {
        let database = try makeGamesPool()
        let fetches = SharedCounter()
        @Fetch(CountingRequest(counter: fetches), database: database.pool) var count = -1
        #expect(count == 0)
        #expect(fetches.count == 1)
        #expect(database.pool.changeHub.observerCount == 1)

        var values = $count.values.makeAsyncIterator()
        _ = await values.next()
        try await database.pool.write { db in try Player(id: 1, name: "Blob").insert(db) }
        #expect(await values.next() == 1)
        #expect(fetches.count == 2)
    }
}
