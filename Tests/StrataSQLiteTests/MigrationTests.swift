import Dispatch
import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct MigrationTests {
    struct Failure: Error {}

    /// A migrator whose migrations log their identifier when they run.
    func makeMigrator(log: Recorder<String>) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1 create teams") { db in
            log.append("1")
            try db.execute(sql: "CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        }
        migrator.registerMigration("2 create players") { db in
            log.append("2")
            try db.execute(
                sql: "CREATE TABLE players (id INTEGER PRIMARY KEY, teamID INTEGER REFERENCES teams(id) ON DELETE CASCADE, name TEXT)")
        }
        migrator.registerMigration("3 add score") { db in
            log.append("3")
            try db.execute(sql: "ALTER TABLE players ADD COLUMN score INTEGER NOT NULL DEFAULT 0")
        }
        return migrator
    }

    @Test func migrationsApplyOnceInOrder() throws {
        let queue = try DatabaseQueue()
        let log = Recorder<String>()
        let migrator = makeMigrator(log: log)
        #expect(migrator.migrationIdentifiers == ["1 create teams", "2 create players", "3 add score"])
        #expect(try queue.read { db in try migrator.hasCompletedMigrations(db) } == false)
        try migrator.migrate(queue)
        try migrator.migrate(queue)
        #expect(log.elements == ["1", "2", "3"])
        try queue.read { db throws in
            #expect(try migrator.appliedIdentifiers(db) == migrator.migrationIdentifiers)
            #expect(try migrator.hasCompletedMigrations(db))
            #expect(try db.tableExists(DatabaseMigrator.migrationsTableName))
            #expect(
                try String.fetchAll(db, sql: "SELECT identifier FROM strata_migrations ORDER BY rowid") == migrator.migrationIdentifiers)
            #expect(try db.fetchCount(sql: "SELECT * FROM pragma_table_info('players') WHERE name = 'score'") == 1)
        }
    }

    @Test func newMigrationsApplyOnTopOfOldOnes() async throws {
        try await withTemporaryDatabasePath { path in
            let log = Recorder<String>()
            let pool = try DatabasePool(path: path)
            var migrator = makeMigrator(log: log)
            try await migrator.migrate(pool, upTo: "2 create players")
            #expect(log.elements == ["1", "2"])
            let firstMigrator = migrator
            let applied = try await pool.read { db in try firstMigrator.appliedIdentifiers(db) }
            #expect(applied == ["1 create teams", "2 create players"])
            migrator.registerMigration("4 seed") { db in
                log.append("4")
                try db.execute(sql: "INSERT INTO teams (name) VALUES ('Red')")
            }
            try await migrator.migrate(pool)
            #expect(log.elements == ["1", "2", "3", "4"])
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM teams") } == 1)
        }
    }

    @Test func upToStopsAtTheTarget() throws {
        let queue = try DatabaseQueue()
        let log = Recorder<String>()
        let migrator = makeMigrator(log: log)
        try migrator.migrate(queue, upTo: "1 create teams")
        #expect(log.elements == ["1"])
        #expect(try queue.read { db in try db.tableExists("players") } == false)
        #expect(try queue.read { db in try migrator.hasCompletedMigrations(db) } == false)
        try migrator.migrate(queue, upTo: "3 add score")
        #expect(log.elements == ["1", "2", "3"])
        let error = #expect(throws: DatabaseError.self) { try migrator.migrate(queue, upTo: "9 unknown") }
        #expect(error?.message.contains("no migration named \"9 unknown\"") == true)
    }

    @Test func failingMigrationRollsBackAndThrows() throws {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("good") { db in try db.execute(sql: "CREATE TABLE a (x)") }
        migrator.registerMigration("bad") { db in
            try db.execute(sql: "CREATE TABLE b (x); INSERT INTO a VALUES (1)")
            throw Failure()
        }
        migrator.registerMigration("never") { db in try db.execute(sql: "CREATE TABLE c (x)") }
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(queue) }
        #expect(error?.identifier == "bad")
        #expect(error?.underlying is Failure)
        #expect(error?.description.contains("migration \"bad\" failed") == true)
        try queue.read { db throws in
            #expect(try migrator.appliedIdentifiers(db) == ["good"])
            #expect(try db.tableExists("a"))
            #expect(try db.tableExists("b") == false)
            #expect(try db.tableExists("c") == false)
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM a") == 0)
            #expect(try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true)
        }
    }

    @Test func failingSQLInAMigrationNamesIt() throws {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("typo") { db in try db.execute(sql: "CREATE TABLET oops (x)") }
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(queue) }
        #expect(error?.identifier == "typo")
        #expect((error?.underlying as? DatabaseError)?.sql == "CREATE TABLET oops (x)")
    }

    @Test func foreignKeyViolationRollsBack() throws {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("schema") { db in
            try db.execute(
                sql: """
                    CREATE TABLE teams (id INTEGER PRIMARY KEY);
                    CREATE TABLE players (id INTEGER PRIMARY KEY, teamID INTEGER REFERENCES teams(id));
                    """)
        }
        migrator.registerMigration("dangling") { db in
            // Foreign keys are off during migrations, so this insert succeeds...
            try db.execute(sql: "INSERT INTO players (id, teamID) VALUES (7, 42)")
        }
        let error = #expect(throws: MigrationError.self) { try migrator.migrate(queue) }
        #expect(error?.identifier == "dangling")
        // ...and the check before commit catches it.
        let violation = error?.underlying as? ForeignKeyViolationError
        #expect(violation?.tableName == "players")
        #expect(violation?.parentTableName == "teams")
        #expect(violation?.rowID == 7)
        try queue.read { db throws in
            #expect(try migrator.appliedIdentifiers(db) == ["schema"])
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM players") == 0)
            #expect(try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true)
        }
    }

    @Test func tableRebuildDoesNotCascade() throws {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("schema") { db in
            try db.execute(
                sql: """
                    CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT);
                    CREATE TABLE players (id INTEGER PRIMARY KEY, teamID INTEGER REFERENCES teams(id) ON DELETE CASCADE);
                    INSERT INTO teams VALUES (1, 'Red');
                    INSERT INTO players VALUES (1, 1);
                    """)
        }
        migrator.registerMigration("rebuild teams") { db in
            try db.execute(
                sql: """
                    CREATE TABLE new_teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '');
                    INSERT INTO new_teams SELECT id, name FROM teams;
                    DROP TABLE teams;
                    ALTER TABLE new_teams RENAME TO teams;
                    """)
        }
        try migrator.migrate(queue)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM players") } == 1)
    }

    @Test func migrationsCannotRunInsideATransaction() throws {
        let queue = try DatabaseQueue()
        let migrator = makeMigrator(log: Recorder())
        // The synchronous migrate uses a barrier write; called inside `write` it is re-entrant.
        #expect(throws: DatabaseAccessError.self) { try queue.write { _ in try migrator.migrate(queue) } }
    }

    @Test func duplicateIdentifiersAreRejected() throws {
        let queue = try DatabaseQueue()
        var migrator = DatabaseMigrator()
        migrator.registerMigration("same") { _ in }
        migrator.registerMigration("same") { _ in }
        let error = #expect(throws: DatabaseError.self) { try migrator.migrate(queue) }
        #expect(error?.message.contains("registered twice") == true)
    }

    @Test func eraseOnSchemaChangeKeepsDataWhenNothingChanged() throws {
        try withTemporaryDatabasePath { path in
            let queue = try DatabaseQueue(path: path)
            var migrator = makeMigrator(log: Recorder())
            migrator.eraseDatabaseOnSchemaChange = true
            try migrator.migrate(queue)
            try queue.write { db in try db.execute(sql: "INSERT INTO teams (name) VALUES ('Red')") }
            try migrator.migrate(queue)
            #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM teams") } == ["Red"])
        }
    }

    @Test func eraseOnSchemaChangeErasesAndRemigratesWhenAMigrationChanged() throws {
        try withTemporaryDatabasePath { path in
            let queue = try DatabaseQueue(path: path)
            var original = DatabaseMigrator()
            original.eraseDatabaseOnSchemaChange = true
            original.registerMigration("create teams") { db in
                try db.execute(sql: "CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT)")
            }
            original.registerMigration("create view") { db in
                try db.execute(sql: "CREATE VIEW team_names AS SELECT name FROM teams; CREATE INDEX teams_name ON teams(name)")
            }
            try original.migrate(queue)
            try queue.write { db in try db.execute(sql: "INSERT INTO teams (name) VALUES ('Red')") }

            // The same identifiers, but the first migration was edited.
            let log = Recorder<String>()
            var edited = DatabaseMigrator()
            edited.eraseDatabaseOnSchemaChange = true
            edited.registerMigration("create teams") { db in
                log.append("create teams")
                try db.execute(sql: "CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT, color TEXT)")
            }
            edited.registerMigration("create view") { db in
                log.append("create view")
                try db.execute(sql: "CREATE VIEW team_names AS SELECT name FROM teams; CREATE INDEX teams_name ON teams(name)")
            }
            try edited.migrate(queue)
            // Applied from scratch (the log only counts runs against the database itself,
            // plus the runs on the in-memory reference used for the comparison).
            #expect(log.elements.suffix(2) == ["create teams", "create view"])
            try queue.read { db throws in
                #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM teams") == 0)
                #expect(try db.fetchCount(sql: "SELECT * FROM pragma_table_info('teams') WHERE name = 'color'") == 1)
                #expect(try edited.appliedIdentifiers(db) == ["create teams", "create view"])
                #expect(try db.tableExists("team_names"))
            }
            // Migrating again with the edited migrator keeps the data now.
            try queue.write { db in try db.execute(sql: "INSERT INTO teams (name) VALUES ('Blue')") }
            try edited.migrate(queue)
            #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM teams") } == 1)
        }
    }

    @Test func eraseOnSchemaChangeErasesWhenAnAppliedMigrationIsUnknown() throws {
        let queue = try DatabaseQueue()
        var first = DatabaseMigrator()
        first.registerMigration("a") { db in try db.execute(sql: "CREATE TABLE a (x); INSERT INTO a VALUES (1)") }
        first.registerMigration("b") { db in try db.execute(sql: "CREATE TABLE b (x)") }
        try first.migrate(queue)
        var second = DatabaseMigrator()
        second.eraseDatabaseOnSchemaChange = true
        second.registerMigration("a") { db in try db.execute(sql: "CREATE TABLE a (x); INSERT INTO a VALUES (1)") }
        try second.migrate(queue)
        try queue.read { db throws in
            #expect(try db.tableExists("b") == false)
            #expect(try second.appliedIdentifiers(db) == ["a"])
        }
    }

    @Test func withoutEraseAnEditedMigrationIsNotReapplied() throws {
        let queue = try DatabaseQueue()
        var original = DatabaseMigrator()
        original.registerMigration("t") { db in try db.execute(sql: "CREATE TABLE t (a)") }
        try original.migrate(queue)
        var edited = DatabaseMigrator()
        edited.registerMigration("t") { db in try db.execute(sql: "CREATE TABLE t (a, b)") }
        try edited.migrate(queue)
        #expect(try queue.read { db in try db.fetchCount(sql: "SELECT * FROM pragma_table_info('t')") } == 1)
    }

    @Test func migrationsRunWithoutReadsUnderABarrier() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            var migrator = DatabaseMigrator()
            let readStarted = DispatchSemaphore(value: 0)
            let releaseRead = DispatchSemaphore(value: 0)
            let readDone = SharedFlag()
            migrator.registerMigration("m") { db in
                // The barrier waited for the read below.
                guard readDone.value.load(ordering: .sequentiallyConsistent) else { throw Failure() }
                try db.execute(sql: "CREATE TABLE m (x)")
            }
            let read = Task {
                try await pool.read { _ in
                    readStarted.signal()
                    try waitOrThrow(releaseRead)
                    readDone.value.store(true, ordering: .sequentiallyConsistent)
                }
            }
            #expect(await wait(for: readStarted))
            let migration = Task { try await migrator.migrate(pool) }
            releaseRead.signal()
            try await read.value
            try await migration.value
            #expect(try await pool.read { db in try db.tableExists("m") })
        }
    }

    @Test func cancelledAsyncMigrationRestoresForeignKeys() async throws {
        try await withTemporaryDatabasePath { path in
            let pool = try DatabasePool(path: path)
            let inside = DispatchSemaphore(value: 0)
            let cancelled = DispatchSemaphore(value: 0)
            let runs = SharedCounter()
            var migrator = DatabaseMigrator()
            migrator.registerMigration("slow") { db in
                try db.execute(sql: "CREATE TABLE t (x)")
                // Only the first run waits to be cancelled.
                if runs.value.add(1, ordering: .sequentiallyConsistent).newValue == 1 {
                    inside.signal()
                    try waitOrThrow(cancelled)
                }
                try db.execute(sql: "INSERT INTO t VALUES (1)")
            }
            let task = Task { try await migrator.migrate(pool) }
            #expect(await wait(for: inside))
            task.cancel()
            cancelled.signal()
            let result = await task.result
            guard case .failure(let error as MigrationError) = result else {
                Issue.record("expected a MigrationError, got \(result)")
                return
            }
            #expect(error.underlying is CancellationError)
            #expect(try await pool.writeWithoutTransaction { db in try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") } == true)
            #expect(try await pool.read { db in try db.tableExists("t") } == false)
            try await migrator.migrate(pool)
            #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 1)
        }
    }
}
