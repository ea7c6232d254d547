import Foundation
import Strata
import Testing

@Suite("Each context gets its kind of sync engine", .timeLimit(.minutes(5)))
struct ContextualSyncEngineTests {
    @Table("games")
    struct Game: Equatable {
        @Column(primaryKey: true) var id: String
        var title: String
    }

    static let schemaSQL = "CREATE TABLE games (id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL)"

    func database() throws -> DatabaseQueue {
        let database = try DatabaseQueue()
        try database.write { db in try db.execute(sql: Self.schemaSQL) }
        return database
    }

    /// ``database()`` for async tests: its write never blocks a cooperative thread.
    func database() async throws -> DatabaseQueue {
        let database = try DatabaseQueue()
        try await database.write { db in try db.execute(sql: Self.schemaSQL) }
        return database
    }

    @Test("live: a container is required")
    func liveNeedsAContainer() throws {
        let database = try database()
        withDependencies {
            $0.context = .live
        } operation: {
            #expect(throws: SyncEngineError.noContainer) { _ = try SyncEngine.contextual(for: database, tables: [Game.self]) }
        }
    }

    @Test("test: a mock cloud and nothing automatic; the test drives the engine")
    func testContext() async throws {
        let database = try await database()
        let engine = try withDependencies {
            $0.context = .test
        } operation: {
            try SyncEngine.contextual(for: database, tables: [Game.self])
        }
        // Started, so sharing works, but with no schedule: nothing happens until the test asks.
        #expect(engine.status.isRunning)
        #expect(engine.container is MockCloudContainer)
        try await database.write { db in try db.execute(sql: "INSERT INTO games VALUES ('g1', 'Poker')") }
        let cloud = try #require(engine.container as? MockCloudContainer).cloud
        let zone = CloudZoneID(name: "strata.default", owner: "preview-user")
        await Task.yield()
        #expect(cloud.records(in: zone).isEmpty)
        #expect(!engine.status.isSendingChanges)
        try await engine.sendChanges()
        #expect(cloud.records(in: zone).count == 1)
    }

    @Test("preview: a mock cloud, synced automatically")
    func previewContext() throws {
        let database = try database()
        let engine = try withDependencies {
            $0.context = .preview
        } operation: {
            try SyncEngine.contextual(for: database, tables: [Game.self])
        }
        defer { engine.stop() }
        #expect(engine.status.isRunning)
        #expect(engine.container is MockCloudContainer)
    }

    @Test("preview: share(record:) sends an unsent record first, and isShared flips in a @FetchAll", .timeLimit(.minutes(1)))
    func previewShare() async throws {
        let database = try await database()
        try await database.write { db in try db.execute(sql: "INSERT INTO games VALUES ('g1', 'Poker')") }
        let engine = try withDependencies {
            $0.context = .preview
        } operation: {
            try SyncEngine.contextual(for: database, tables: [Game.self])
        }
        defer { engine.stop() }
        @FetchAll(SyncMetadata.where { $0.isShared }, database: database) var sharedRecords
        let shared = try await engine.share(record: Game(id: "g1", title: "Poker"))
        #expect(shared.share.isOwnedByCurrentUser)
        for await records in $sharedRecords.values where !records.isEmpty { break }
        #expect(sharedRecords.map(\.recordPrimaryKey) == ["g1"])
    }

    @Test("defaultSyncEngine can be set and read")
    func defaultSyncEngine() throws {
        let database = try database()
        try withDependencies {
            $0.context = .test
            $0.defaultSyncEngine = try SyncEngine.contextual(for: database, tables: [Game.self])
        } operation: {
            @Dependency(\.defaultSyncEngine) var engine
            #expect(engine.schema.tables.map(\.name) == ["games"])
        }
    }
}
