import StrataSQLite
import Foundation

struct Player: TableRecord, Codable, Sendable {
    static let tableName = "players"
    static let columnNames = ["id", "name", "score", "joinedAt"]
    var id: Int64
    var name: String
    var score: Int
    var joinedAt: Date?
}

let pool = try DatabasePool(named: "smoke")
var migrator = DatabaseMigrator()
migrator.registerMigration("v1") { db in
    try db.execute(sql: "CREATE TABLE players (id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL, joinedAt TEXT)")
}
try migrator.migrate(pool)
try await pool.write { db in
    try Player(id: 1, name: "Blob", score: 10, joinedAt: Date(timeIntervalSince1970: 0)).insert(db)
    try Player(id: 2, name: "Blob Jr", score: 5, joinedAt: nil).insert(db)
    try db.execute("UPDATE players SET score = score + \(3) WHERE id = \(2)")
}
let players = try await pool.read { db in try Player.fetchAll(db) }
print(players)
let n = try pool.read { db in try Player.fetchCount(db) }
print(n)
do {
    try pool.write { db in try Player(id: 1, name: "dup", score: 0, joinedAt: nil).insert(db) }
} catch { print(error) }
do {
    try pool.read { db in try db.execute(sql: "SELEC 1") }
} catch { print(error) }
do {
    try pool.write { db in try pool.write { _ in } }
} catch { print(error) }
