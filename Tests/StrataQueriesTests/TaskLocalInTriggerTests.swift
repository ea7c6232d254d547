import Foundation
import StrataQueries
import StrataSQLite
import Testing

/// Who the current request acts for: what a sync engine reads from a trigger to tell its own
/// writes from the app's.
enum RequestContext {
    @TaskLocal static var actor = "nobody"
}

@DatabaseFunction
func requestActor() -> String { RequestContext.actor }

@Suite(.timeLimit(.minutes(5))) struct TaskLocalInTriggerTests {
    // The async write runs its closure inside the calling task, on the connection's own
    // executor, so the task's locals are there when SQLite calls the function.
    @Test func taskLocalAroundAnAsyncWriteReachesAFunctionCalledByATrigger() async throws {
        let pool = try DatabasePool(named: "strata-task-local-\(UUID().uuidString)")
        let trigger = HGame.createTemporaryTrigger("stampActor", after: .update(touch: \.title, to: $requestActor()))
        try await pool.writeWithoutTransaction { db in
            try db.execute(
                sql: "CREATE TABLE games (id INTEGER PRIMARY KEY, title TEXT NOT NULL); INSERT INTO games VALUES (1, 'Chess'), (2, 'Go')")
            try db.add(function: $requestActor)
            try trigger.execute(db)
        }
        try await RequestContext.$actor.withValue("alice") {
            try await pool.write { db in try HGame.find(1).update { $0.title = "x" }.execute(db) }
        }
        try await pool.write { db in try HGame.find(2).update { $0.title = "y" }.execute(db) }
        let titles = try await pool.read { db in try HGame.order(by: \.id).select(\.title).fetchAll(db) }
        #expect(titles == ["alice", "nobody"])
    }
}
