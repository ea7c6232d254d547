import Foundation
import Strata
import StrataTestSupport
import Testing

@Suite("Bootstrapping the live database twice", .timeLimit(.minutes(5)))
struct BootstrapTwiceTests {
    @Test("reports an issue and returns the pool already open")
    func twice() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("app.sqlite").path
        try withDependencies {
            $0.context = .live
        } operation: {
            let first = try Strata.defaultDatabase(path: path)
            var second: (any DatabaseWriter)?
            try withKnownIssue {
                second = try Strata.defaultDatabase(path: path)
            } matching: { issue in
                issue.description.contains("bootstrapped a second time")
            }
            #expect(second.map { $0 === first } == true)
        }
    }

    @Test("a released pool's file can be opened again without an issue")
    func afterRelease() throws {
        let folder = try TemporaryDirectory()
        defer { folder.remove() }
        let path = folder.url.appendingPathComponent("app.sqlite").path
        try withDependencies {
            $0.context = .live
        } operation: {
            do {
                let first = try Strata.defaultDatabase(path: path)
                try first.write { db in try db.execute(sql: "CREATE TABLE t (x); INSERT INTO t VALUES (1)") }
            }
            let again = try Strata.defaultDatabase(path: path)
            #expect(try again.read { db in try db.fetchCount(sql: "SELECT * FROM t") } == 1)
        }
    }
}
