import StrataSQLite
import StrataTestSupport
import Testing

/// Objects Strata's own modules create in the user's file (names starting with `strata_`) are
/// not the app's schema: `eraseDatabaseOnSchemaChange` must never erase because of them
/// (issue #24, item 1).
@Suite(.timeLimit(.minutes(1))) struct ReservedSchemaObjectsTests {
    static func migrator() -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.eraseDatabaseOnSchemaChange = true
        migrator.registerMigration("teams") { db in
            try db.execute(sql: "CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT)")
        }
        return migrator
    }

    @Test(arguments: [
        "CREATE TABLE strata_sync_changes (sequence INTEGER PRIMARY KEY, tableName TEXT)",
        "CREATE TABLE strata_assets (id BLOB PRIMARY KEY) WITHOUT ROWID",
        "CREATE TABLE strata_x (a); CREATE INDEX strata_x_a ON strata_x (a); CREATE TRIGGER strata_x_t AFTER INSERT ON strata_x BEGIN SELECT 1; END",
        "CREATE INDEX strata_teams_name ON teams (name)",
    ])
    func libraryObjectsAreNotASchemaChange(libraryObjects: String) async throws {
        #expect(try await Self.teamsAfterMigratingAgain(with: libraryObjects) == ["Red"])
    }

    /// Migrates a file, adds a team and `objects`, migrates again: the teams left.
    static func teamsAfterMigratingAgain(with objects: String) async throws -> [String] {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let queue = try DatabaseQueue(path: folder.databasePath)
        try await migrator().migrate(queue)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO teams (name) VALUES ('Red')")
            try db.execute(sql: objects)
        }
        try await migrator().migrate(queue)
        return try await queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM teams") }
    }

    /// The app's own objects still count, whatever their name looks like.
    @Test(arguments: [
        "CREATE INDEX teams_name ON teams (name)",
        "CREATE TABLE stratax (a)",
        "CREATE TABLE strataXsync (a)",
    ])
    func theAppsObjectsStillCount(appObjects: String) async throws {
        #expect(try await Self.teamsAfterMigratingAgain(with: appObjects).isEmpty)
    }

}
