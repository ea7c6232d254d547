import StrataSQLite
import StrataTestSupport
import Testing

/// Hooks a library sets on a connection run around every migration, inside its transaction.
@Suite(.timeLimit(.minutes(1))) struct MigrationHookTests {
    struct Refused: Error {}

    @Test func hooksRunAroundEachMigrationInItsTransaction() async throws {
        let log = Recorder<String>()
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            db.setMigrationHook(
                "test", before: { db in log.append("before \(db.isInsideTransaction)") },
                after: { db in log.append("after \(db.isInsideTransaction)") })
        }
        let queue = try DatabaseQueue(configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("a") { _ in log.append("a") }
        migrator.registerMigration("b") { _ in log.append("b") }
        try await migrator.migrate(queue)
        try await migrator.migrate(queue)  // nothing pending: no hook runs
        #expect(log.elements == ["before true", "a", "after true", "before true", "b", "after true"])
    }

    @Test func aFailingAfterHookRollsTheMigrationBack() async throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            db.setMigrationHook("test", before: { _ in }, after: { _ in throw Refused() })
            db.setMigrationHook("test", before: { _ in }, after: { _ in throw Refused() })  // replaces, once
        }
        let queue = try DatabaseQueue(configuration: configuration)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("a") { db in try db.execute(sql: "CREATE TABLE t (x)") }
        let error = await #expect(throws: MigrationError.self) { try await migrator.migrate(queue) }
        #expect(error?.underlying is Refused)
        #expect(try await queue.read { db in try db.tableExists("t") } == false)
    }
}
