import DependenciesTestSupport
import Foundation
import Testing

@testable import Strata

@Suite("Reading the default database before it is set", .timeLimit(.minutes(5)))
struct UnsetDefaultDatabaseTests {
    @Test("reports an issue with the test context's advice, and hands out a usable blank database")
    func inTests() throws {
        var database: (any DatabaseWriter)?
        withKnownIssue {
            @Dependency(\.defaultDatabase) var defaultDatabase
            database = defaultDatabase
        } matching: { issue in
            let text = issue.description
            return text.contains("was read before a database was set") && text.contains(".dependencies")
        }
        let blank = try #require(database)
        try blank.write { db in try db.execute(sql: "CREATE TABLE t (x)") }
        #expect(try blank.read { db in try db.tableExists("t") })
    }

    @Test("in a preview, the advice is the preview's")
    func inPreview() {
        withDependencies {
            $0.context = .preview
        } operation: {
            withKnownIssue {
                @Dependency(\.defaultDatabase) var database
                _ = database
            } matching: { issue in
                issue.description.contains("let _ = prepareDependencies")
            }
        }
    }

    @Test("live advice names prepareDependencies at the entry point")
    func liveAdvice() {
        let message = UnsetDefaultDatabase.message(for: .live)
        #expect(message.contains("prepareDependencies { try $0.bootstrapDatabase() }"))
        #expect(message.contains("blank in-memory database"))
    }

    @Test("reading after bootstrap reports nothing", .dependencies { try $0.bootstrapDatabase() })
    func afterBootstrap() throws {
        @Dependency(\.defaultDatabase) var database
        #expect(try database.read { db in try db.tableExists("items") })
    }
}
