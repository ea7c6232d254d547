import Dependencies
import Foundation
import Strata
import StrataTestSupport
import Testing

/// `DEFAULT (uuid())`, as SQLiteData's users declare keys, works on the default database and
/// draws from the `uuid` dependency.
@Suite(.timeLimit(.minutes(1))) struct UUIDFunctionTests {
    func open(_ configuration: Configuration = Configuration()) async throws -> any DatabaseWriter {
        let context = withDependencies {
            $0.context = .test
            $0.uuid = .incrementing
        } operation: {
            DependencyValues._current
        }
        return try await runOnBackgroundThread {
            try withDependencies {
                $0 = context
            } operation: {
                try defaultDatabase(configuration: configuration)
            }
        }
    }

    @Test func uuidDrawsFromTheDependency() async throws {
        let database = try await open()
        let ids = try await database.write { db in
            try db.execute(sql: "CREATE TABLE t (id TEXT PRIMARY KEY NOT NULL ON CONFLICT REPLACE DEFAULT (uuid()), n INTEGER)")
            try db.execute(sql: "INSERT INTO t (id, n) VALUES (NULL, 1), (NULL, 2)")
            try db.execute(sql: "INSERT INTO t (n) VALUES (3)")
            return try String.fetchAll(db, sql: "SELECT id FROM t ORDER BY n")
        }
        #expect(ids == [UUID(0), UUID(1), UUID(2)].map { $0.uuidString.lowercased() })
    }

    @Test func anAppsOwnUUIDFunctionWins() async throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.add(function: DatabaseFunction("uuid", argumentCount: 0) { _ in "mine" })
        }
        let database = try await open(configuration)
        #expect(try await database.read { db in try String.fetchOne(db, sql: "SELECT uuid()") } == "mine")
    }
}
