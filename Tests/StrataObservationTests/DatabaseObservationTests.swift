import Dispatch
import Foundation
import StrataObservation
import StrataSQLite
import StrataTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(5))) struct DatabaseObservationTests {
    @Test func firstElementIsTheCurrentValue() async throws {
        let database = try makeGamesPool()
        try await database.pool.write { db in try Player(id: 1, name: "Blob").insert(db) }
        var iterator = observe(in: database.pool) { db in try Player.fetchAll(db) }.makeAsyncIterator()
        #expect(try await iterator.next() == [Player(id: 1, name: "Blob")])
    }

    @Test func insertUpdateAndDeleteEachDeliverANewValue() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        var iterator = observe(in: pool) { db in try Player.fetchAll(db, sql: "SELECT * FROM players ORDER BY id") }.makeAsyncIterator()
        #expect(try await iterator.next() == [])

        try await pool.write { db in try Player(id: 1, name: "Blob").insert(db) }
        #expect(try await iterator.next() == [Player(id: 1, name: "Blob")])

        try await pool.write { db in try db.execute("UPDATE players SET score = \(5) WHERE id = \(1)") }
        #expect(try await iterator.next() == [Player(id: 1, name: "Blob", score: 5)])

        try await pool.write { db in try Player.deleteOne(db, id: 1) }
        #expect(try await iterator.next() == [])
    }

    @Test func deleteWithoutWhereIsSeen() async throws {
        // SQLite's truncate optimization skips the update hook; the writer's authorizer turns
        // it off.
        let database = try makeGamesPool()
        let pool = database.pool
        try await pool.write { db in try Player(id: 1, name: "Blob").insert(db) }
        var iterator = observe(in: pool) { db in try Player.fetchCount(db) }.makeAsyncIterator()
        #expect(try await iterator.next() == 1)
        try await pool.write { db in try db.execute(sql: "DELETE FROM players") }
        #expect(try await iterator.next() == 0)
    }

    @Test func writesToUnrelatedTablesCauseNoFetch() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        let fetches = SharedCounter()
        var iterator = observe(in: pool) { db in
            fetches.increment()
            return try Player.fetchCount(db)
        }.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        #expect(fetches.count == 1)

        for index in 0..<20 {
            try await pool.write { db in try db.execute("INSERT INTO unrelated (note) VALUES (\("note \(index)"))") }
        }
        try await pool.write { db in try db.execute(sql: "INSERT INTO games (title) VALUES ('Chess')") }
        // Commits are announced synchronously at the end of each write, so by now the 21
        // unrelated commits above have been considered and ignored.
        try await pool.write { db in try Player(id: 1, name: "Blob").insert(db) }
        #expect(try await iterator.next() == 1)
        #expect(fetches.count == 2)
    }

    @Test func rolledBackTransactionsNotifyNobody() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        let fetches = SharedCounter()
        var iterator = observe(in: pool) { db in
            fetches.increment()
            return try Player.fetchAll(db)
        }.makeAsyncIterator()
        #expect(try await iterator.next() == [])

        struct Abort: Error {}
        await #expect(throws: Abort.self) {
            try await pool.write { db in
                try Player(id: 1, name: "Ghost").insert(db)
                throw Abort()
            }
        }
        try await pool.writeWithoutTransaction { db in
            try db.inTransaction {
                try Player(id: 2, name: "Ghost too").insert(db)
                return .rollback
            }
        }
        try await pool.write { db in try Player(id: 3, name: "Real").insert(db) }
        #expect(try await iterator.next() == [Player(id: 3, name: "Real")])
        #expect(fetches.count == 2)
    }

    @Test func savepointsReleaseAndRollBack() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        var iterator = observe(in: pool) { db in try Player.fetchAll(db, sql: "SELECT * FROM players ORDER BY id") }
            .removingDuplicates().makeAsyncIterator()
        #expect(try await iterator.next() == [])

        try await pool.write { db in
            try db.inSavepoint {
                try Player(id: 1, name: "Kept").insert(db)
                return .commit
            }
            try db.inSavepoint {
                try Player(id: 2, name: "Dropped").insert(db)
                return .rollback
            }
        }
        #expect(try await iterator.next() == [Player(id: 1, name: "Kept")])

        // A transaction whose only change is rolled back to a savepoint changes nothing that
        // is visible: with duplicates removed, the next element is the next real change.
        try await pool.write { db in
            try db.inSavepoint {
                try Player(id: 3, name: "Dropped").insert(db)
                return .rollback
            }
        }
        try await pool.write { db in try Player(id: 4, name: "Next").insert(db) }
        #expect(try await iterator.next() == [Player(id: 1, name: "Kept"), Player(id: 4, name: "Next")])
    }

    @Test func burstOfCommitsDuringAFetchCoalescesIntoOneFollowUp() async throws {
        // Fetches handed to a reader: an inline one would hold the writer at the gate.
        var configuration = Configuration()
        configuration.inlineObservationBudget = .zero
        let database = try makeGamesPool(configuration: configuration)
        let pool = database.pool
        let fetches = SharedCounter()
        let gate = Gate()
        var iterator = observe(in: pool) { db in
            fetches.increment()
            gate.passIfOpen()
            return try Player.fetchCount(db)
        }.makeAsyncIterator()
        #expect(try await iterator.next() == 0)

        gate.close()
        try await pool.write { db in try Player(id: 1, name: "P1").insert(db) }
        // The fetch triggered by the first commit has taken its snapshot and is held here.
        try #require(gate.waitUntilHeld())
        for id in 2...100 {
            try await pool.write { db in try Player(id: Int64(id), name: "P\(id)").insert(db) }
        }
        gate.open()

        let last = try await nextValue(&iterator, where: { $0 == 100 })
        #expect(last == 100)
        // Initial fetch, the held fetch, and one follow-up for the 99 commits made meanwhile.
        #expect(fetches.count == 3)
    }

    @Test func aCheapFetchRunsOnTheCommittingThreadBeforeTheWriteReturns() async throws {
        // A budget no fetch of this test can exceed, however loaded the machine.
        var configuration = Configuration()
        configuration.inlineObservationBudget = .seconds(60)
        let database = try makeGamesPool(configuration: configuration)
        let pool = database.pool
        let fetchThreads = Mutex<[pthread_t]>([])
        var iterator = observe(in: pool) { db in
            fetchThreads.withLock { $0.append(pthread_self()) }
            return try Player.fetchCount(db)
        }.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        // From a thread of its own, where the commit is announced: the fetch it triggers (the
        // first one took less than the budget) runs there, so it is done when write returns.
        let (committingThread, fetchesWhenWriteReturned) = try await runOnBackgroundThread {
            try pool.write { db in try Player(id: 1, name: "Blob").insert(db) }
            return (pthread_self(), fetchThreads.withLock { $0.count })
        }
        #expect(fetchesWhenWriteReturned == 2)
        #expect(fetchThreads.withLock { pthread_equal($0[1], committingThread) != 0 })
        #expect(try await iterator.next() == 1)
    }

    @Test func joinsTrackEveryTable() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (1, 'Chess')")
            try Player(id: 1, gameID: 1, name: "Blob").insert(db)
        }
        var iterator = observe(in: pool) { db in
            try String.fetchAll(db, sql: "SELECT games.title || ':' || players.name FROM games JOIN players ON players.gameID = games.id")
        }.makeAsyncIterator()
        #expect(try await iterator.next() == ["Chess:Blob"])
        try await pool.write { db in try db.execute(sql: "UPDATE games SET title = 'Go'") }
        #expect(try await iterator.next() == ["Go:Blob"])
        try await pool.write { db in try db.execute(sql: "UPDATE players SET name = 'Bo'") }
        #expect(try await iterator.next() == ["Go:Bo"])
    }

    @Test func viewsTrackTheirUnderlyingTables() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        try await pool.write { db in
            try db.execute(sql: "CREATE VIEW leaders AS SELECT name FROM players WHERE score >= 10")
        }
        var iterator = observe(in: pool) { db in try String.fetchAll(db, sql: "SELECT name FROM leaders") }.makeAsyncIterator()
        #expect(try await iterator.next() == [])
        try await pool.write { db in try Player(id: 1, name: "Champion", score: 12).insert(db) }
        #expect(try await iterator.next() == ["Champion"])
    }

    @Test func attachedDatabasesAreTracked() async throws {
        let attached = FileManager.default.temporaryDirectory.appendingPathComponent("strata-attached-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: attached) }
        do {
            let setup = try DatabaseQueue(path: attached.path)
            try await setup.write { db in try db.execute(sql: "CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL)") }
            setup.close()
        }
        var configuration = Configuration()
        let path = attached.path
        configuration.prepareDatabase { db in try db.attach(path: path, as: "league") }
        let database = try makeGamesPool(configuration: configuration)
        let pool = database.pool
        try await pool.write { db in try Player(id: 1, name: "Blob").insert(db) }

        let fetches = SharedCounter()
        var iterator = observe(in: pool) { db in
            fetches.increment()
            return try String.fetchAll(
                db, sql: "SELECT players.name || '@' || teams.name FROM players JOIN league.teams ON teams.id = players.id")
        }.makeAsyncIterator()
        #expect(try await iterator.next() == [])
        try await pool.write { db in try db.execute(sql: "INSERT INTO league.teams (id, name) VALUES (1, 'Reds')") }
        #expect(try await iterator.next() == ["Blob@Reds"])
        #expect(fetches.count == 2)
    }

    @Test func cancellingTheConsumerFreesTheObserver() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        for _ in 0..<1000 {
            let task = Task {
                var iterator = observe(in: pool) { db in try Player.fetchCount(db) }.makeAsyncIterator()
                _ = try await iterator.next()
            }
            _ = try await task.value
        }
        // Each iteration's sequence ended with its task; nothing stays registered.
        #expect(pool.changeHub.observerCount == 0)
    }

    @Test func cancellingOneConsumerUnregistersOnlyItsObservation() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        let cancelledIterator = observe(in: pool) { db in try Player.fetchCount(db) }.makeAsyncIterator()
        var keptIterator = observe(in: pool) { db in try Player.fetchCount(db) }.makeAsyncIterator()
        let cancelledStatus = cancelledIterator.status
        // Registered as soon as the iterator exists, before any value is awaited.
        #expect(cancelledStatus.isActive)
        #expect(keptIterator.isActive)

        let consumer = Task { [cancelledIterator] in
            var iterator = cancelledIterator
            while try await iterator.next() != nil {}
        }
        consumer.cancel()
        // Cancelling the task ends its stream, which unregisters the observation before the
        // task can finish: no polling needed.
        _ = await consumer.result
        #expect(!cancelledStatus.isActive)
        #expect(keptIterator.isActive)

        // The other observation still hears commits.
        #expect(try await keptIterator.next() == 0)
        try await pool.write { db in try db.execute(sql: "INSERT INTO players (id, name) VALUES (1, 'Arthur')") }
        #expect(try await nextValue(&keptIterator, where: { $0 == 1 }) == 1)
        #expect(keptIterator.isActive)
    }

    @Test func aFailedFetchUnregistersItsObservation() async throws {
        let database = try makeGamesPool()
        var iterator = observe(in: database.pool) { db in try Int.fetchAll(db, sql: "SELECT * FROM missing_table") }.makeAsyncIterator()
        await #expect(throws: DatabaseError.self) { _ = try await iterator.next() }
        // The failure was delivered after the observer stopped fetching; finishing the stream
        // unregistered it.
        #expect(!iterator.isActive)
    }

    @Test func theStatusDoesNotKeepTheObservationAlive() async throws {
        let database = try makeGamesPool()
        var iterator: DatabaseObservation<Int>.Iterator? = observe(in: database.pool) { db in try Player.fetchCount(db) }
            .makeAsyncIterator()
        let status = try #require(iterator?.status)
        #expect(status.isActive)
        iterator = nil
        #expect(!status.isActive)
        #expect(database.pool.changeHub.observerCount == 0)
    }

    @Test func aFailingFetchEndsTheSequenceWithItsError() async throws {
        let database = try makeGamesPool()
        var iterator = observe(in: database.pool) { db in try Int.fetchAll(db, sql: "SELECT * FROM missing_table") }.makeAsyncIterator()
        await #expect(throws: DatabaseError.self) { _ = try await iterator.next() }
    }

    @Test func explicitNotificationReachesObservers() async throws {
        // A second pool on the same file writes behind the first pool's back: its hooks see
        // nothing until notifyChanges(in:) is called.
        let database = try makeGamesPool()
        let other = try DatabasePool(path: database.directory.appendingPathComponent("db.sqlite").path)
        defer { other.close() }
        var iterator = observe(in: database.pool) { db in try Player.fetchCount(db) }.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        try await other.write { db in try Player(id: 1, name: "Elsewhere").insert(db) }
        database.pool.notifyChanges(in: DatabaseRegion(tables: ["players"]))
        #expect(try await iterator.next() == 1)
    }
}

/// Holds fetches while closed; reports that one is held.
final class Gate: @unchecked Sendable {
    private let lock = NSCondition()
    private var isClosed = false
    private var isHeld = false

    func close() {
        lock.withLock { isClosed = true }
    }

    func open() {
        lock.withLock {
            isClosed = false
            lock.broadcast()
        }
    }

    /// Called from the fetch, on a reader's dispatch queue (blocking there is fine).
    func passIfOpen() {
        lock.withLock {
            guard isClosed else { return }
            isHeld = true
            lock.broadcast()
            while isClosed { lock.wait() }
            isHeld = false
        }
    }

    func waitUntilHeld(timeout: TimeInterval = 45) -> Bool {
        lock.withLock {
            let deadline = Date().addingTimeInterval(timeout)
            while !isHeld {
                if !lock.wait(until: deadline) { return false }
            }
            return true
        }
    }
}

@Suite(.timeLimit(.minutes(5))) struct ChangesTheUpdateHookMissesTests {
    @Test func withoutRowIDTablesAreTracked() async throws {
        // SQLite does not call the update hook for WITHOUT ROWID tables; the tables a
        // statement writes are announced from its prepared form instead.
        let database = try makeGamesPool()
        let pool = database.pool
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        }
        var iterator = observe(in: pool) { db in try String.fetchAll(db, sql: "SELECT value FROM settings ORDER BY key") }
            .makeAsyncIterator()
        #expect(try await iterator.next() == [])
        try await pool.write { db in try db.execute(sql: "INSERT INTO settings VALUES ('theme', 'dark')") }
        #expect(try await iterator.next() == ["dark"])
        try await pool.write { db in try db.execute(sql: "UPDATE settings SET value = 'light'") }
        #expect(try await iterator.next() == ["light"])
    }

    @Test func rowsReplacedOnConflictAreTracked() async throws {
        let database = try makeGamesPool()
        let pool = database.pool
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE tags (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
            try db.execute(sql: "INSERT INTO tags (id, name) VALUES (1, 'a')")
        }
        var iterator = observe(in: pool) { db in try Int.fetchAll(db, sql: "SELECT id FROM tags ORDER BY id") }.makeAsyncIterator()
        #expect(try await iterator.next() == [1])
        try await pool.write { db in try db.execute(sql: "INSERT OR REPLACE INTO tags (id, name) VALUES (2, 'a')") }
        #expect(try await iterator.next() == [2])
    }
}
