import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

/// A commit is announced to observers even when the same writer job rolls back a later
/// transaction (regression: the rollback used to clear what the earlier commit changed).
@Suite(.timeLimit(.minutes(5))) struct CommitAnnouncementTests {
    /// Counts the announcements of commits that changed `t`.
    final class Announcements: Sendable {
        let count = SharedCounter()
        var value: Int { count.value.load(ordering: .relaxed) }
    }

    func makePool(path: String) throws -> (DatabasePool, Announcements, DatabaseChangeRegistration) {
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2), (3)") }
        let announcements = Announcements()
        let observation = pool.observeChanges(in: DatabaseRegion(tables: ["t"])) {
            announcements.count.value.add(1, ordering: .relaxed)
        }
        return (pool, announcements, observation)
    }

    @Test func aCommitFollowedByARolledBackTransactionInOneJobIsAnnounced() throws {
        try withTemporaryDatabasePath { path in
            let (pool, announcements, observation) = try makePool(path: path)
            defer { observation.cancel() }
            try pool.writeWithoutTransaction { db in
                try db.inTransaction {
                    try db.execute(sql: "INSERT INTO t VALUES (4)")
                    return .commit
                }
                try db.inTransaction {
                    try db.execute(sql: "INSERT INTO t VALUES (5)")
                    return .rollback
                }
            }
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 4)
            #expect(announcements.value == 1)
        }
    }

    @Test func anAutocommittedInsertFollowedByAFailingOneIsAnnounced() throws {
        try withTemporaryDatabasePath { path in
            let (pool, announcements, observation) = try makePool(path: path)
            defer { observation.cancel() }
            try pool.write { db in try db.execute(sql: "CREATE UNIQUE INDEX t_a ON t(a)") }
            let before = announcements.value
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "INSERT INTO t VALUES (4)")
                try? db.execute(sql: "INSERT INTO t VALUES (4)")  // fails: UNIQUE, rolls back
            }
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 4)
            #expect(announcements.value == before + 1)
        }
    }

    @Test func aMigrationThatCommittedBeforeALaterOneFailedIsAnnounced() throws {
        try withTemporaryDatabasePath { path in
            let (pool, announcements, observation) = try makePool(path: path)
            defer { observation.cancel() }
            var migrator = DatabaseMigrator()
            migrator.registerMigration("v1") { db in try db.execute(sql: "INSERT INTO t VALUES (4)") }
            migrator.registerMigration("v2") { db in try db.execute(sql: "INSERT INTO missing VALUES (5)") }
            #expect(throws: MigrationError.self) { try migrator.migrate(pool) }
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 4)
            #expect(announcements.value == 1)
        }
    }

    @Test func aRolledBackTransactionAloneIsNotAnnounced() throws {
        try withTemporaryDatabasePath { path in
            let (pool, announcements, observation) = try makePool(path: path)
            defer { observation.cancel() }
            try pool.writeWithoutTransaction { db in
                try db.inTransaction {
                    try db.execute(sql: "INSERT INTO t VALUES (5)")
                    return .rollback
                }
            }
            #expect(announcements.value == 0)
        }
    }
}
