import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Testing

@testable import StrataSync

/// The seeds' own set-up paths across launches: `eraseDatabaseOnSchemaChange` in DEBUG, the
/// documented `prepareDatabase { try db.attachMetadatabase() }`, sign-out (issue #24, items 1,
/// 3 and 4).
@Suite(.timeLimit(.minutes(2))) struct MetadatabaseLifecycleTests {
    static let container = "iCloud.com.example.scores"

    static func migrator(editedSchema: Bool = false) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.eraseDatabaseOnSchemaChange = true
        migrator.registerMigration("v1") { db in
            try db.execute(sql: SyncTestDevice.schemaSQL)
            if editedSchema { try db.execute(sql: "CREATE INDEX games_title ON games (title)") }
        }
        return migrator
    }

    /// One launch of an app: open the file, migrate, start an engine.
    static func launch(
        _ path: String, cloud: MockCloud, editedSchema: Bool = false, attachInPrepare: String?? = .none
    ) async throws -> (DatabasePool, SyncEngine) {
        var configuration = Configuration()
        if case .some(let identifier) = attachInPrepare {
            configuration.prepareDatabase { db in try db.attachMetadatabase(containerIdentifier: identifier) }
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try await migrator(editedSchema: editedSchema).migrate(pool)
        let engine = try SyncEngine(
            for: pool, tableNames: ["games", "players"], container: cloud.container(user: "alice"),
            configuration: SyncEngineConfiguration(deviceID: "phone", schedule: nil), startImmediately: false)
        return (pool, engine)
    }

    /// The first launch: two games (and `extraSQL`) synced, the tokens past them, closed.
    static func firstLaunch(_ path: String, cloud: MockCloud, extraSQL: String = "") async throws {
        let (pool, engine) = try await launch(path, cloud: cloud)
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g1', 'Poker'), ('g2', 'Chess')")
            if !extraSQL.isEmpty { try db.execute(sql: extraSQL) }
        }
        try await engine.syncChanges()
        // Fetched again: the change tokens now cover this device's own records.
        try await engine.syncChanges()
        pool.close()
    }

    static func gameCount(_ pool: DatabasePool) async throws -> Int {
        try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM games") ?? 0 }
    }

    @Test func theDebugSetupKeepsASyncedDatabaseAcrossLaunches() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        try await Self.firstLaunch(folder.databasePath, cloud: cloud)
        let (pool, engine) = try await Self.launch(folder.databasePath, cloud: cloud)
        defer { pool.close() }
        #expect(try await Self.gameCount(pool) == 2)
        try await engine.syncChanges()
        #expect(try await Self.gameCount(pool) == 2)
        #expect(try await engine.pendingCount() == 0)
    }

    /// A real schema change erases the file; the metadatabase, which described the erased rows
    /// as synced, is reset with it, and the cloud's copy comes back.
    @Test func anEraseResetsTheMetadatabaseAndTheRowsComeBack() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        try await Self.firstLaunch(
            folder.databasePath, cloud: cloud, extraSQL: "INSERT INTO players (id, gameID, name) VALUES ('p1', 'g1', 'Blob')")
        let (pool, engine) = try await Self.launch(folder.databasePath, cloud: cloud, editedSchema: true)
        defer { pool.close() }
        #expect(try await Self.gameCount(pool) == 0)  // erased: the schema changed
        try await engine.syncChanges()
        #expect(try await Self.gameCount(pool) == 2)
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM players") } == 1)
        #expect(try await engine.pendingCount() == 0)
        // A row added after the erase syncs as usual.
        try await pool.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g3', 'Go')") }
        try await engine.syncChanges()
        #expect(cloud.records(in: CloudZoneID(name: "strata.default", owner: "alice")).count == 4)
    }

    /// The documented line added in a later version attaches the metadatabase the engine
    /// already uses: nothing is sent again.
    @Test func addingTheDocumentedAttachLaterKeepsTheMetadatabase() async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        try await Self.firstLaunch(folder.databasePath, cloud: cloud)
        let sentBefore = cloud.modifyRequestSizes.reduce(0, +)
        let (pool, engine) = try await Self.launch(folder.databasePath, cloud: cloud, attachInPrepare: .some(nil))
        defer { pool.close() }
        #expect(try await engine.pendingCount() == 0)
        try await engine.syncChanges()
        #expect(cloud.modifyRequestSizes.reduce(0, +) == sentBefore)
        // Readers see the engine's metadatabase too.
        let known = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM strata_sync.metadata") }
        #expect(known == 2)
    }

    /// Another container's metadatabase attached first is a typed error naming both files.
    @Test(arguments: [nil, "iCloud.some.other"] as [String?])
    func anotherContainersMetadatabaseIsRefused(attached: String?) async throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let cloud = MockCloud(identifier: Self.container)
        await #expect {
            _ = try await Self.launch(folder.databasePath, cloud: cloud, attachInPrepare: .some(attached))
        } throws: { error in
            guard case SyncEngineError.metadatabaseMismatch(let attachedFile, let expected) = error else { return false }
            return attachedFile.hasSuffix(".db.metadata-\(attached ?? Metadatabase.defaultContainerIdentifier).sqlite")
                && expected.hasSuffix(".db.metadata-\(Self.container).sqlite")
        }
    }

    /// Sign-out forgets every account table of the metadatabase, the records' old copies to
    /// delete among them: the next user never sends into the previous user's zones.
    @Test func signOutForgetsEveryAccountTable() async throws {
        let cloud = MockCloud(identifier: Self.container)
        let device = try await SyncTestDevice("phone", cloud: cloud)
        try await device.execute("INSERT INTO games (id, title) VALUES ('g1', 'Poker')")
        try await device.engine.syncChanges()
        // An old copy waiting to be deleted in alice's zone, as a move leaves.
        try await device.database.write { db in
            try db.execute(
                sql:
                    "INSERT INTO strata_sync.moved_records (recordName, zoneName, ownerName, depth) VALUES ('g1:games', 'strata.default', 'alice', 0)"
            )
            try db.execute(
                sql:
                    "INSERT INTO strata_sync.waiting_content (recordName, zoneName, ownerName, hash, content) VALUES ('x', 'z', 'alice', 'h', x'00')"
            )
        }
        try await device.engine.deleteLocalData()
        for table in MetadatabaseTable.allCases where table.scope == .account {
            let rows = try await device.database.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table.qualifiedName)") }
            #expect(rows == 0, "\(table.rawValue) kept \(rows ?? -1) rows after sign-out")
        }
    }
}
