import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

/// Failures never lose a change: a lost response, a transient error, a parent missing on fetch.
@Suite(.timeLimit(.minutes(5))) struct FaultTests {
    @Test func aResponseLostAfterTheChangeLandedConverges() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await a.engine.syncChanges()
        try await a.execute("UPDATE games SET title = 'Bridge' WHERE id = 'g1'")
        cloud.loseNextResponses(1, operations: [.modifyRecords])
        await #expect(throws: CloudError.networkFailure) { try await a.engine.sendChanges() }
        #expect(try await a.pending() == 1)
        try await a.engine.syncChanges()
        #expect(try await a.pending() == 0)
        try await b.engine.syncChanges()
        #expect(try await b.rows() == ["game g1 'Bridge' NULL"])
    }

    @Test func aTransientFailureKeepsEverythingPending() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess')")
        cloud.failNextRequests(1, with: .serviceUnavailable(retryAfter: .seconds(3)), operations: [.modifyRecords])
        await #expect(throws: CloudError.serviceUnavailable(retryAfter: .seconds(3))) { try await a.engine.sendChanges() }
        #expect(try await a.pending() == 2)
        #expect(a.engine.status.lastError != nil)
        try await a.engine.sendChanges()
        #expect(try await a.pending() == 0)
        #expect(a.engine.status.lastError == nil)
    }

    @Test func aChildFetchedBeforeItsParentWaitsForIt() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud, fetchPageSize: 1)
        try await a.execute("INSERT INTO games (id) VALUES ('g1'); INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Ann')")
        try await a.engine.syncChanges()
        try await a.execute("UPDATE games SET title = 'edited last' WHERE id = 'g1'")  // now the child comes first
        try await a.engine.syncChanges()
        try await b.engine.fetchChanges()
        #expect(try await b.rows() == ["game g1 'edited last' NULL", "player p1 'g1' 'Ann'"])
    }

    @Test func fiveHundredChildrenBeforeTheirParent() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud, fetchPageSize: 100)
        try await a.execute("INSERT INTO games (id) VALUES ('g1')")
        try await a.database.write { db in
            for index in 0..<500 {
                try db.execute(sql: "INSERT INTO players (id, gameID) VALUES (?, 'g1')", arguments: ["p\(index)"])
            }
        }
        try await a.engine.syncChanges()
        try await a.execute("UPDATE games SET title = 'edited last' WHERE id = 'g1'")
        try await a.engine.syncChanges()
        try await b.engine.fetchChanges()
        let count = try await b.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM players") }
        #expect(count == 500)
    }

    @Test func requestsOverTheLimitAreSplit() async throws {
        let cloud = MockCloud(limits: CloudLimits(maximumItemsPerRequest: 10))
        let a = try await SyncTestDevice("a", cloud: cloud, batchSize: 400)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.database.write { db in
            for index in 0..<25 { try db.execute(sql: "INSERT INTO games (id) VALUES (?)", arguments: ["g\(index)"]) }
        }
        try await a.engine.sendChanges()
        #expect(try await a.pending() == 0)
        try await b.engine.fetchChanges()
        #expect(try await b.rows().count == 25)
    }

    @Test func aZoneDeletedInTheCloudIsCreatedAgain() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        try await a.execute("INSERT INTO games (id) VALUES ('g1')")
        try await a.engine.sendChanges()
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        try await cloud.container(user: "alice").privateDatabase.deleteZones([zone])
        try await a.execute("INSERT INTO games (id) VALUES ('g2')")
        try await a.engine.sendChanges()
        #expect(cloud.records(in: zone).map(\.id.name) == ["g2:games"])
    }

    @Test func schemaErrorsNameTheTable() async throws {
        let cloud = MockCloud()
        await #expect(throws: SyncSchemaError.primaryKeyNotText(table: "notes", column: "id", declaredType: "INTEGER")) {
            _ = try await SyncTestDevice(
                "a", cloud: cloud, schema: "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)", tables: ["notes"])
        }
    }
}

/// An expired change token makes the device fetch the zone whole, and rows deleted meanwhile
/// (their tombstones forgotten) go too.
@Suite(.timeLimit(.minutes(5))) struct ExpiredTokenTests {
    @Test func anExpiredTokenRefetchesTheZoneAndDropsWhatTheCloudForgot() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess')")
        try await a.engine.syncChanges()
        try await b.engine.syncChanges()
        try await a.execute("DELETE FROM games WHERE id = 'g2'")
        try await a.execute("UPDATE games SET title = 'Bridge' WHERE id = 'g1'")
        try await a.engine.syncChanges()
        cloud.purgeTombstones(in: CloudZoneID(name: "strata.default", owner: "alice"))
        try await b.engine.syncChanges()
        #expect(try await b.rows() == ["game g1 'Bridge' NULL"])
    }
}

/// The changes of one local transaction travel in one request when they fit, so another device
/// never sees half of a transaction.
@Suite(.timeLimit(.minutes(5))) struct TransactionBatchingTests {
    @Test func transactionsAreNotSplitAcrossRequestsWhenTheyFit() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, batchSize: 10)
        for transaction in 0..<3 {
            try await a.database.write { db in
                for row in 0..<6 {
                    try db.execute(sql: "INSERT INTO games (id) VALUES (?)", arguments: ["g\(transaction)-\(row)"])
                }
            }
        }
        // The keys first: their own requests are not the rows'.
        try await a.engine.prepareEncryption()
        let before = cloud.modifyRequestSizes.count
        try await a.engine.sendChanges()
        #expect(Array(cloud.modifyRequestSizes.dropFirst(before)) == [6, 6, 6])
        #expect(try await a.pending() == 0)
    }

    @Test func aTransactionLargerThanARequestGoesInPiecesParentsFirst() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, batchSize: 10)
        try await a.database.write { db in
            try db.execute(sql: "INSERT INTO games (id) VALUES ('g')")
            for row in 0..<14 { try db.execute(sql: "INSERT INTO players (id, gameID) VALUES (?, 'g')", arguments: ["p\(row)"]) }
        }
        try await a.engine.prepareEncryption()
        let before = cloud.modifyRequestSizes.count
        try await a.engine.sendChanges()
        #expect(Array(cloud.modifyRequestSizes.dropFirst(before)) == [10, 5])
        #expect(try await a.pending() == 0)
    }
}
