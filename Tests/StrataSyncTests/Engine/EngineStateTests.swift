import StrataSQLite
import StrataTestSupport
import Testing

@testable import StrataSync

/// The engine's state (change tokens, the clock) is saved after every fetch, mostly unchanged:
/// an unchanged value writes nothing, so its transaction commits without an fsync.
@Suite(.timeLimit(.minutes(1))) struct EngineStateTests {
    @Test func anUnchangedValueWritesNothingAndAChangedOneIsSaved() async throws {
        let queue = try DatabaseQueue()
        let results = try await queue.write { db -> [Int] in
            try db.execute(sql: "ATTACH DATABASE ':memory:' AS strata_sync")
            try MetadatabaseTable.createAll(in: db)
            var changes: [Int] = []
            func change() throws -> Int { try Int.fetchOne(db, sql: "SELECT changes()") ?? -1 }
            try EngineState.set("token", to: "a", in: db)
            changes.append(try change())
            try EngineState.set("token", to: "a", in: db)
            changes.append(try change())
            try EngineState.set("token", to: "b", in: db)
            changes.append(try change())
            #expect(try EngineState.value("token", in: db) == "b")
            try EngineState.set("token", to: nil, in: db)
            changes.append(try change())
            #expect(try EngineState.value("token", in: db) == nil)
            return changes
        }
        #expect(results == [1, 0, 1, 1])
    }
}
