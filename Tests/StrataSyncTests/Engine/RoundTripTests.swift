import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// Inserts, updates and deletes travel between two devices of one user.
@Suite(.timeLimit(.minutes(5))) struct RoundTripTests {
    @Test func insertsArriveOnTheOtherDevice() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title, score) VALUES ('g1', 'Poker', 3)")
        try await a.execute("INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')")
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(try await b.rows() == ["game g1 'Poker' 3", "player p1 'g1' 'Ann'"])
        #expect(try await a.pending() == 0)
        #expect(try await b.pending() == 0)
    }

    @Test func updatesAndDeletesFollow() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await b.execute("UPDATE games SET title = 'Bridge' WHERE id = 'g1'")
        try await b.execute("DELETE FROM games WHERE id = 'g2'")
        try await b.engine.syncChanges()
        try await a.engine.syncChanges()
        #expect(try await a.rows() == ["game g1 'Bridge' NULL"])
        #expect(try await a.rows() == b.rows())
        #expect(try await a.pending() == 0)
    }

    @Test func aCascadingDeleteRemovesTheChildrenEverywhere() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id) VALUES ('g1'); INSERT INTO players (id, gameID) VALUES ('p1', 'g1'), ('p2', 'g1')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        #expect(try await b.rows().count == 3)
        try await a.execute("DELETE FROM games WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        #expect(try await b.rows() == [])
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).isEmpty)
    }

    @Test func aDeletedAndReinsertedRowSyncsAsASave() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await a.execute("DELETE FROM games WHERE id = 'g1'")
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker again')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        #expect(try await b.rows() == ["game g1 'Poker again' NULL"])
    }

    @Test func generatedColumnsAreNotSent() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.sendChanges()
        let record = try #require(try await a.cloudRecords(cloud).first)
        #expect(record.fields["titleLength"] == nil)
        #expect(record.fields["title"] == .text("Poker"))
        #expect(record.fieldVersions["title"] != nil)
    }

    @Test func changesMadeWhileStoppedGoOutAfterStart() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        a.engine.stop()
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        a.engine.start()
        try await a.engine.sendChanges()
        a.engine.stop()
        try await b.engine.fetchChanges()
        #expect(try await b.rows() == ["game g1 'Poker' NULL"])
    }

    @Test func theEnginesOwnWritesAreNotSentBack() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        try await b.engine.fetchChanges()
        #expect(try await b.pending() == 0)
        let modifies = cloud.requestCount(.modifyRecords)
        try await b.engine.sendChanges()
        #expect(cloud.requestCount(.modifyRecords) == modifies)
    }
}

/// An edit committed while its record's batch is in flight stays pending and goes next.
@Suite(.timeLimit(.minutes(5))) struct InFlightEditTests {
    @Test func anEditMadeBeforeTheAcknowledgmentIsSentNext() async throws {
        let cloud = MockCloud()
        // The first modify request edits the row before the cloud applies the batch.
        let database = try DatabaseQueue()
        let edited = SharedFlag()
        let container = InterceptingContainer(base: cloud.container(user: "alice")) { saving, deleting, next in
            if !edited.value.exchange(true, ordering: .relaxed) {
                // The app's own write, from a task of its own: not the engine's work.
                try await Task.detached {
                    try await database.write { db in try db.execute(sql: "UPDATE games SET title = 'edited in flight' WHERE id = 'g1'") }
                }.value
            }
            return try await next.modifyRecords(saving: saving, deleting: deleting)
        }
        let a = try await SyncTestDevice("a", container: container, database: database)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.sendChanges()
        #expect(try await a.pending() == 0)
        try await b.engine.syncChanges()
        #expect(try await b.rows() == ["game g1 'edited in flight' NULL"])
    }
}

/// One call sends everything committed before it, however many batches that takes.
@Suite(.timeLimit(.minutes(5))) struct LargeUploadTests {
    @Test func anUploadOfMoreThanSixtyFourBatchesGoesOutInOneCall() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, batchSize: 2)
        try await a.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) INSERT INTO games (id, title) SELECT 'g' || i, 'game ' || i FROM n"
        )
        try await a.engine.sendChanges()
        #expect(try await a.pending() == 0)
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 300)
    }
}
