import Foundation
import Strata
import StrataTestSupport
import Testing

@Suite("Each context gets its kind of database", .timeLimit(.minutes(5)))
struct ContextTests {
    @Test("live: a pool on disk at the given path, folders created")
    func liveAtPath() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("nested/deeper/app.sqlite").path
        try withDependencies {
            $0.context = .live
        } operation: {
            let database = try Strata.defaultDatabase(path: path)
            let pool = try #require(database as? DatabasePool)
            #expect(pool.location == .file(path: path))
            try pool.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
            #expect(FileManager.default.fileExists(atPath: path))
            let journal = try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
            #expect(journal == "wal")
        }
    }

    @Test("live: the default location follows XDG_DATA_HOME, else ~/.local/share")
    func liveDefaultLocation() throws {
        let xdg = try DefaultDatabaseLocation.standard(
            applicationName: "scorekeeper", environment: ["XDG_DATA_HOME": "/data/home", "HOME": "/home/blob"])
        let home = try DefaultDatabaseLocation.standard(applicationName: "scorekeeper", environment: ["HOME": "/home/blob"])
        // A relative XDG_DATA_HOME is invalid under the specification and is ignored.
        let relative = try DefaultDatabaseLocation.standard(
            applicationName: "scorekeeper", environment: ["XDG_DATA_HOME": "relative", "HOME": "/home/blob"])
        #if !canImport(Darwin)
            #expect(xdg.path == "/data/home/scorekeeper/db.sqlite")
            #expect(home.path == "/home/blob/.local/share/scorekeeper/db.sqlite")
            #expect(relative.path == home.path)
        #endif
        #expect(throws: DefaultDatabaseError.emptyPath) { try DefaultDatabaseLocation(path: "") }
    }

    @Test("live: the default location is created when missing")
    func liveDefaultLocationCreated() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let location = try DefaultDatabaseLocation.standard(
            applicationName: "demo", environment: ["XDG_DATA_HOME": folder.url.path])
        try location.createParentDirectory()
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("demo").path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
    }

    @Test("preview: a named in-memory pool, the same one for a second setup")
    func preview() throws {
        let name = "context-tests-\(UUID().uuidString)"
        try withDependencies {
            $0.context = .preview
        } operation: {
            let first = try Strata.defaultDatabase(path: name)
            let pool = try #require(first as? DatabasePool)
            #expect(pool.location.description.contains("in-memory"))
            #expect(pool.location.description.contains("preview-\(name)"))
            try first.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
            // A preview that runs its setup again finds the data of the first run.
            let second = try Strata.defaultDatabase(path: name)
            #expect(try second.read { db in try db.fetchCount(sql: "SELECT * FROM t") } == 1)
        }
    }

    @Test("test: an in-memory pool of its own on every call")
    func testContext() throws {
        let first = try Strata.defaultDatabase(path: "ignored.sqlite")
        let second = try Strata.defaultDatabase(path: "ignored.sqlite")
        let pool = try #require(first as? DatabasePool)
        #expect(pool.location.description.contains("in-memory"))
        #expect(!FileManager.default.fileExists(atPath: "ignored.sqlite"))
        try first.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        #expect(try second.read { db in try db.tableExists("t") } == false)
    }
}
