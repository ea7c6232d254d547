import Foundation
import StrataSQLite
import StrataSyncTestSupport
import StrataTestSupport
import Testing

@testable import StrataSync

/// The metadata queries every fetch makes (the push path's included) are answered from an
/// index: a scan of every record's metadata makes a push as slow as the database is large.
@Suite(.timeLimit(.minutes(2))) struct MetadataQueryPlanTests {
    static let everyFetch: [(name: String, sql: String, index: String)] = [
        ("the user's shared roots", SyncEngine.ownSharedRootsSQL, "metadata_shares"),
        ("the roots of a zone shared with the user", SyncEngine.rootsSharedWithUserSQL, "metadata_zone_roots"),
        ("the shares of the user's records", SyncEngine.sharesOfUserSQL, "metadata_shares"),
    ]

    @Test(arguments: 0..<everyFetch.count)
    func aFetchsMetadataQueryUsesItsIndex(query: Int) async throws {
        let (name, sql, index) = Self.everyFetch[query]
        let device = try await SyncTestDevice("a", cloud: MockCloud())
        try await device.database.write { db in
            for game in 0..<300 {
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 't')", arguments: ["g\(game)"])
                try db.execute(sql: "INSERT INTO players (id, gameID) VALUES (?, ?)", arguments: ["p\(game)", "g\(game)"])
            }
        }
        try await device.engine.sendChanges()
        let arguments = StatementArguments(Array(repeating: "alice", count: sql.filter { $0 == "?" }.count))
        let plan = try await device.database.write { db in
            try db.fetchAll(sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments) { row -> String in try row[3] }
        }
        #expect(plan.contains { $0.contains(index) }, "\(name): \(plan)")
        #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(name): \(plan)")
    }
}
