import StrataQueries
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import Testing

@Table struct Team: Equatable {
    let id: String
    var name = ""
}

/// A synced row finds its metadata, and queries join the two.
@Suite(.timeLimit(.minutes(5))) struct SyncMetadataIDTests {
    func makeEngine() async throws -> (DatabaseQueue, SyncEngine) {
        let device = try await SyncTestDevice(
            "a", cloud: MockCloud(), time: nil,
            schema: "CREATE TABLE teams (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL DEFAULT '')", tables: [Team.tableName])
        return (device.database, device.engine)
    }

    @Test func aRowFindsItsMetadata() async throws {
        let (database, engine) = try await makeEngine()
        let red = Team(id: "red", name: "Red")
        try await database.write { db in try Team.insert { red }.execute(db) }
        try await engine.sendChanges()
        #expect(try red.syncMetadataID == SyncMetadata.ID(recordType: "teams", recordPrimaryKey: "red"))
        let metadata = try await database.read { db in try SyncMetadata.find(red.syncMetadataID).fetchOne(db) }
        #expect(metadata?.id == (try red.syncMetadataID))
        #expect(metadata?.serverChangeTag != nil)
        #expect(metadata?.pendingOperation == nil)
    }

    @Test func queriesJoinRowsWithTheirMetadata() async throws {
        let (database, engine) = try await makeEngine()
        try await database.write { db in
            try Team.insert { Team(id: "red", name: "Red") }.execute(db)
            try Team.insert { Team(id: "blue", name: "Blue") }.execute(db)
        }
        try await engine.sendChanges()
        try await database.write { db in try Team.update { $0.name = "Navy" }.where { $0.id == "blue" }.execute(db) }
        let rows = try await database.write { db in
            try Team.join(SyncMetadata.all) { $0.syncMetadataID.eq($1.id) }
                .order { team, _ in team.id }
                .fetchAll(db)
        }
        #expect(rows.map { $0.0.name } == ["Navy", "Red"])
        #expect(rows.map { $0.1.recordPrimaryKey } == ["blue", "red"])
        // The rename is captured but not drained yet: the metadata says what was last sent.
        #expect(rows.allSatisfy { $0.1.serverChangeTag != nil })
    }
}
