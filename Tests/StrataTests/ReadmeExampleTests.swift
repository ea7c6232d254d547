import Foundation
import Strata
import Testing

// The README's opening example, compiled and run as written (with a temporary file).
@Table struct Player: Identifiable {
    let id: Int
    var name = ""
    var score = 0
}

@Suite(.timeLimit(.minutes(5))) struct ReadmeExampleTests {
    @Test func openingExampleRuns() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-readme-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let pool = try DatabasePool(path: directory.appendingPathComponent("scores.sqlite").path)
        defer { pool.close() }
        try await pool.write { db in
            try db.execute(sql: "CREATE TABLE players (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)")
        }

        try await pool.write { db in
            try Player.insert { Player.Draft(name: "Blob", score: 10) }.execute(db)
            try Player.where { $0.name.eq("Blob") }.update { $0.score += 1 }.execute(db)
        }
        let leaders = try await pool.read { db in
            try Player.order { $0.score.desc() }.limit(3).fetchAll(db)
        }
        #expect(leaders.map(\.score) == [11])
        for try await count in observe(in: pool, { db in try Player.fetchCount(db) }) {
            #expect(count == 1)
            break
        }
    }
}
