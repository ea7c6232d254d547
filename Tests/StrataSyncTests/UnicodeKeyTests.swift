import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// Keys that Swift's `String ==` calls equal but SQLite keeps apart: canonically equivalent
/// texts (a precomposed letter and the same letter with a combining mark), which SQLite
/// compares byte for byte. Each is its own row, so each must be its own record everywhere.
@Suite(.timeLimit(.minutes(2))) struct UnicodeKeyTests {
    /// Pairs of canonically equivalent keys with different bytes.
    static let pairs: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"),  // NFC / NFD
        ("\u{212B}", "\u{C5}"),  // ANGSTROM SIGN / LATIN CAPITAL A WITH RING ABOVE
        ("\u{1E69}", "s\u{323}\u{307}"),  // two combining marks, in canonical order
        ("s\u{323}\u{307}", "s\u{307}\u{323}"),  // the same marks, reordered
    ]

    static func rows(_ device: SyncTestDevice) async throws -> [String] {
        try await device.database.read { db in
            try String.fetchAll(db, sql: "SELECT hex(id) || ' ' || title FROM games ORDER BY hex(id)")
                + String.fetchAll(db, sql: "SELECT hex(id) || ' ' || hex(gameID) || ' ' || name FROM players ORDER BY hex(id)")
        }
    }

    @Test(arguments: 0..<pairs.count, [1, 400])
    func canonicallyEquivalentKeysAreTwoRecords(pair: Int, batchSize: Int) async throws {
        let (first, second) = Self.pairs[pair]
        #expect(first == second, "Swift calls them equal: the test's premise")
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, batchSize: batchSize, fetchPageSize: batchSize)
        let b = try await SyncTestDevice("b", cloud: cloud, batchSize: batchSize, fetchPageSize: batchSize)
        try await a.database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 'first'), (?, 'second')", arguments: [first, second])
            try db.execute(
                sql: "INSERT INTO players (id, gameID, name) VALUES (?, ?, 'p1'), (?, ?, 'p2')",
                arguments: [first, first, second, second])
        }
        try await a.engine.sendChanges()
        #expect(try await a.engine.pendingCount() == 0)
        let zone = CloudZoneID(name: "strata.default", owner: "alice")
        #expect(cloud.records(in: zone).count == 4)
        try await b.engine.fetchChanges()
        #expect(try await Self.rows(b) == Self.rows(a))

        // An edit of one of them changes that row only, both ways.
        try await b.database.write { db in
            try db.execute(sql: "UPDATE games SET title = 'second, edited' WHERE id = ?", arguments: [second])
        }
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await Self.rows(a) == Self.rows(b))
        #expect(
            try await a.database.read { db in try String.fetchOne(db, sql: "SELECT title FROM games WHERE id = ?", arguments: [first]) }
                == "first")

        // Deleting one leaves the other (and its child) on both devices.
        try await a.database.write { db in try db.execute(sql: "DELETE FROM games WHERE id = ?", arguments: [first]) }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(try await Self.rows(b) == Self.rows(a))
        #expect(try await Self.rows(b).count == 2)
        #expect(cloud.records(in: zone).count == 2)
    }

    /// A child moved from one parent to another whose key differs only in its bytes: the move
    /// is a change (its foreign key's text changed), and it arrives, both ways.
    @Test(arguments: 0..<pairs.count)
    func aChildMovedBetweenCanonicallyEquivalentParentsMoves(pair: Int) async throws {
        let (first, second) = Self.pairs[pair]
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 'first'), (?, 'second')", arguments: [first, second])
            try db.execute(sql: "INSERT INTO players (id, gameID, name) VALUES ('p1', ?, 'p1')", arguments: [first])
        }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(try await Self.rows(b) == Self.rows(a))

        try await a.execute("SELECT 1")
        try await a.database.write { db in
            try db.execute(sql: "UPDATE players SET gameID = ? WHERE id = 'p1'", arguments: [second])
        }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(try await Self.rows(b) == Self.rows(a), "the move reached B")
        let parentOnB = try await b.database.read { db in try String.fetchOne(db, sql: "SELECT hex(gameID) FROM players") }
        let expected = try await a.database.read { db in try String.fetchOne(db, sql: "SELECT hex(?)", arguments: [second]) }
        #expect(parentOnB == expected)

        // And back, from B.
        try await b.execute("SELECT 1")
        try await b.database.write { db in
            try db.execute(sql: "UPDATE players SET gameID = ? WHERE id = 'p1'", arguments: [first])
        }
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await Self.rows(a) == Self.rows(b), "the move back reached A")
    }

    /// Values compare as SQLite compares them.
    @Test func databaseValuesOfCanonicallyEquivalentTextsDiffer() {
        for (first, second) in Self.pairs {
            #expect(DatabaseValue.text(first) != DatabaseValue.text(second))
            #expect(Set([DatabaseValue.text(first), .text(second)]).count == 2)
            #expect(DatabaseValue.text(first) == DatabaseValue.text(String(first)))
        }
    }
}
