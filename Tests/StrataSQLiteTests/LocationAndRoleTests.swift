import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// Where a database lives, the role of each connection, and attaching a sibling database from
/// `prepareDatabase`.
@Suite(.timeLimit(.minutes(5))) struct LocationAndRoleTests {
    @Test func writersTellWhereTheyLive() throws {
        try withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            #expect(pool.location == .file(path: path))
            #expect(pool.location.path == path)
            let sibling = pool.location.sibling(named: ".meta.sqlite")
            #expect(sibling.path == (path as NSString).deletingLastPathComponent + "/.meta.sqlite")
        }
        let name = uniqueMemoryName()
        let named = try DatabaseQueue(named: name)
        #expect(named.location == .namedMemory(name: name))
        #expect(named.location.path == nil)
        #expect(named.location.sibling(named: "meta") == .namedMemory(name: name + "/meta"))
        #expect(try DatabaseQueue().location == .privateMemory)
        #expect(throws: DatabaseAccessError.self) { try DatabasePool(location: .privateMemory) }
    }

    @Test func preparationsLearnTheirConnectionsRole() async throws {
        try await withTemporaryDatabasePath { path in
            let roles = Recorder<ConnectionRole>()
            var configuration = Configuration()
            configuration.prepareDatabase { db in roles.append(db.role) }
            let pool = try DatabasePool(path: path, configuration: configuration)
            _ = try await pool.read { _ in 1 }
            #expect(roles.elements == [.writer, .reader])
            _ = try DatabaseQueue(configuration: configuration)
            #expect(roles.elements.last == .queue)
        }
    }

    @Test func attachingAMissingFileInPrepareDatabaseCreatesItInWAL() async throws {
        try await withTemporaryDatabasePath { path in
            let metaPath = path + ".meta"
            defer { removeDatabaseFiles(at: metaPath) }
            var configuration = Configuration()
            configuration.prepareDatabase { db in try db.attach(path: metaPath, as: "meta") }
            let pool = try DatabasePool(path: path, configuration: configuration)
            try await pool.write { db in
                try db.execute(sql: "CREATE TABLE meta.notes (text TEXT); INSERT INTO meta.notes VALUES ('hello')")
            }
            #expect(try await pool.read { db in try String.fetchOne(db, sql: "PRAGMA meta.journal_mode") } == "wal")
            #expect(try await pool.read { db in try String.fetchAll(db, sql: "SELECT text FROM meta.notes") } == ["hello"])
            // Readers see the attached file's commits, as they see the main file's.
            try await pool.write { db in try db.execute(sql: "INSERT INTO meta.notes VALUES ('again')") }
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM meta.notes") } == 2)
        }
    }

    @Test func theMigratorsScratchConnectionAttachesMemoryInsteadOfTheFile() throws {
        try withTemporaryDatabasePath { path in
            let metaPath = path + ".meta"
            defer { removeDatabaseFiles(at: metaPath) }
            let roles = Recorder<ConnectionRole>()
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                roles.append(db.role)
                try db.attach(path: metaPath, as: "meta")
            }
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            try queue.write { db in try db.execute(sql: "CREATE TABLE meta.kept (a INTEGER); INSERT INTO meta.kept VALUES (1)") }
            var migrator = DatabaseMigrator()
            migrator.eraseDatabaseOnSchemaChange = true
            migrator.registerMigration("v1") { db in try db.execute(sql: "CREATE TABLE t (a INTEGER)") }
            try migrator.migrate(queue)
            try migrator.migrate(queue)  // compares schemas on the scratch connection
            #expect(roles.elements.contains(.migrationReference))
            #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM meta.kept") } == 1)
        }
    }
}
