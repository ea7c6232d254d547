import StrataSQLite
import StrataTestSupport
import Testing

/// A schema change hook runs at the start of a write access when the schema changed since it
/// last ran, whoever changed it; never for reads, never twice for one change.
@Suite(.timeLimit(.minutes(1))) struct SchemaChangeHookTests {
    @Test func theHookRunsAtTheFirstWriteAndAfterEachSchemaChangeMadeElsewhere() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path("hooked.sqlite")
        let runs = Recorder<Int>()
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            db.setSchemaChangeHook("test") { db in
                runs.append(try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? -1)
            }
        }
        let hooked = try DatabaseQueue(path: path, configuration: configuration)
        let other = try DatabaseQueue(path: path)
        _ = try await hooked.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        #expect(runs.elements.isEmpty)  // reads never run it
        try await hooked.write { db in try db.execute(sql: "CREATE TABLE mine (x)") }
        #expect(runs.elements == [0])  // the first write, before its body
        try await hooked.write { db in try db.execute(sql: "INSERT INTO mine VALUES (1)") }
        #expect(runs.elements == [0, 1])  // its own CREATE changed the schema
        try await hooked.writeWithoutTransaction { db in try db.execute(sql: "INSERT INTO mine VALUES (2)") }
        #expect(runs.elements == [0, 1])  // unchanged since
        try await other.write { db in try db.execute(sql: "CREATE TABLE theirs (y)") }
        try await other.write { db in try db.execute(sql: "INSERT INTO theirs VALUES (1)") }
        #expect(runs.elements == [0, 1])  // another connection's change, seen at the next write
        try await hooked.write { db in try db.execute(sql: "INSERT INTO mine VALUES (3)") }
        #expect(runs.elements == [0, 1, 2])
    }

    @Test func aThrowingHookFailsTheWriteAndChangesNothing() async throws {
        struct Refused: Error {}
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            db.setSchemaChangeHook("test") { _ in throw Refused() }
        }
        let queue = try DatabaseQueue(configuration: configuration)
        await #expect(throws: Refused.self) {
            try await queue.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        }
        #expect(try await queue.read { db in try db.tableExists("t") } == false)
    }
}
