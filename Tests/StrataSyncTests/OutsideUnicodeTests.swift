import Foundation
import StrataSQLite
import StrataSync
import StrataSyncTestSupport
import StrataTestSupport
import Testing

/// Outside adversarial tests: keys and values Swift's `String ==` calls equal but whose bytes
/// differ must stay apart everywhere (cascades, concurrent edits, fresh fetches, re-keys).
@Suite(.timeLimit(.minutes(2))) struct OutsideUnicodeTests {
    static let long = String(repeating: "x", count: 320)
    static let pairs: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"),
        ("\u{212B}", "\u{C5}"),
        ("s\u{323}\u{307}", "s\u{307}\u{323}"),
        (long + "\u{E9}", long + "e\u{301}"),  // long, differ in last scalar only
        ("k:caf\u{E9}", "k:cafe\u{301}"),  // colon inside the key
        ("k:\u{301}\u{323}", "k:\u{323}\u{301}"),  // colon followed by combining marks
        ("\u{E9}:", "e\u{301}:"),  // key ending with a colon
        ("\u{1100}\u{1161}", "\u{AC00}"),  // Hangul jamo vs syllable
    ]

    static let zone = CloudZoneID(name: "strata.default", owner: "alice")

    static func rows(_ device: SyncTestDevice) async throws -> [String] {
        try await device.database.read { db in
            try String.fetchAll(db, sql: "SELECT 'g ' || hex(id) || ' ' || hex(title) || ' ' || quote(score) FROM games ORDER BY hex(id)")
                + String.fetchAll(
                    db, sql: "SELECT 'p ' || hex(id) || ' ' || quote(hex(gameID)) || ' ' || quote(hex(name)) FROM players ORDER BY hex(id)")
        }
    }

    static func hex(_ s: String) -> String { s.utf8.map { String(format: "%02X", $0) }.joined() }

    static func title(_ device: SyncTestDevice, _ id: String) async throws -> String? {
        try await device.database.read { db in
            try String.fetchOne(db, sql: "SELECT hex(title) FROM games WHERE id = ?", arguments: [id])
        }
    }

    static func seed(_ a: SyncTestDevice, _ first: String, _ second: String) async throws {
        try await a.database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 'first'), (?, 'second')", arguments: [first, second])
            try db.execute(
                sql: "INSERT INTO players (id, gameID, name) VALUES (?, ?, 'p1'), (?, ?, 'p2')",
                arguments: [first, first, second, second])
        }
    }

    // 1. Cascade: deleting one of two look-alike parents leaves the other and its child everywhere.
    @Test(arguments: 0..<pairs.count)
    func cascadeDeletesOnlyOneLookAlikeParent(pair: Int) async throws {
        let (first, second) = Self.pairs[pair]
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        let c = try await SyncTestDevice("c", cloud: cloud)
        try await Self.seed(a, first, second)
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        try await c.engine.fetchChanges()
        #expect(try await Self.rows(b) == Self.rows(a))
        #expect(try await Self.rows(c) == Self.rows(a))

        b.time?.advance()
        try await b.database.write { db in try db.execute(sql: "DELETE FROM games WHERE id = ?", arguments: [first]) }
        try await b.engine.sendChanges()
        #expect(try await b.engine.pendingCount() == 0)
        try await a.engine.fetchChanges()
        try await c.engine.fetchChanges()
        let expected = try await Self.rows(b)
        #expect(expected.count == 2, "B keeps the other game and its player: \(expected)")
        #expect(try await Self.rows(a) == expected)
        #expect(try await Self.rows(c) == expected)
        #expect(cloud.records(in: Self.zone).count == 2)
        let d = try await SyncTestDevice("d", cloud: cloud, fetchPageSize: 1)
        try await d.engine.fetchChanges()
        #expect(try await Self.rows(d) == expected)
    }

    /// Two devices with one wall clock, both holding the two look-alike games and players.
    static func seededPair(
        _ first: String, _ second: String
    ) async throws -> (MockCloud, ManualWallClock, SyncTestDevice, SyncTestDevice) {
        let cloud = MockCloud()
        let clock = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, time: clock)
        let b = try await SyncTestDevice("b", cloud: cloud, time: clock)
        try await seed(a, first, second)
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        return (cloud, clock, a, b)
    }

    // 2. Concurrent edits on two devices to the two look-alike rows: no mixing.
    @Test(arguments: 0..<pairs.count)
    func concurrentEditsToLookAlikeRowsStayApart(pair: Int) async throws {
        let (first, second) = Self.pairs[pair]
        let (cloud, clock, a, b) = try await Self.seededPair(first, second)

        clock.advance()
        try await a.database.write { db in
            try db.execute(sql: "UPDATE games SET title = 'fromA', score = 1 WHERE id = ?", arguments: [first])
            try db.execute(sql: "UPDATE players SET name = 'nA' WHERE id = ?", arguments: [first])
        }
        clock.advance()
        try await b.database.write { db in
            try db.execute(sql: "UPDATE games SET title = 'fromB', score = 2 WHERE id = ?", arguments: [second])
            try db.execute(sql: "UPDATE players SET name = 'nB' WHERE id = ?", arguments: [second])
        }
        try await a.engine.sendChanges()
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(try await a.engine.pendingCount() == 0)
        #expect(try await b.engine.pendingCount() == 0)
        #expect(try await Self.rows(a) == Self.rows(b))
        for device in [a, b] {
            #expect(try await Self.title(device, first) == Self.hex("fromA"), "device \(device.id)")
            #expect(try await Self.title(device, second) == Self.hex("fromB"), "device \(device.id)")
        }
        // And a fresh device with tiny pages agrees.
        for page in [1, 2] {
            let c = try await SyncTestDevice("c\(page)", cloud: cloud, fetchPageSize: page)
            try await c.engine.fetchChanges()
            #expect(try await Self.rows(c) == Self.rows(a), "page size \(page)")
        }
    }

    // 3. Concurrent delete of one look-alike and edit of the other.
    @Test(arguments: 0..<pairs.count)
    func concurrentDeleteAndEditOfLookAlikes(pair: Int) async throws {
        let (first, second) = Self.pairs[pair]
        let (cloud, clock, a, b) = try await Self.seededPair(first, second)
        clock.advance()
        try await a.database.write { db in try db.execute(sql: "DELETE FROM games WHERE id = ?", arguments: [first]) }
        clock.advance()
        try await b.database.write { db in
            try db.execute(sql: "UPDATE games SET title = 'kept' WHERE id = ?", arguments: [second])
            try db.execute(sql: "INSERT INTO players (id, gameID, name) VALUES ('new', ?, 'n')", arguments: [second])
        }
        try await b.engine.sendChanges()
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        try await a.engine.fetchChanges()
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        let rowsA = try await Self.rows(a)
        #expect(rowsA == (try await Self.rows(b)))
        #expect(rowsA.count == 3, "game second, its two players: \(rowsA)")
        for device in [a, b] {
            #expect(try await Self.title(device, second) == Self.hex("kept"))
            #expect(try await Self.title(device, first) == nil)
        }
    }

    // 4. A fresh device fetching many look-alikes with tiny pages equals the writer.
    @Test(arguments: [1, 2])
    func freshDeviceWithTinyPagesGetsEveryLookAlike(page: Int) async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud, batchSize: page)
        try await a.database.write { db in
            for (i, (first, second)) in Self.pairs.enumerated() {
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, ?), (?, ?)", arguments: [first, "f\(i)", second, "s\(i)"])
                try db.execute(
                    sql: "INSERT INTO players (id, gameID, name) VALUES (?, ?, ?), (?, ?, ?)",
                    arguments: [first, second, first, second, first, second])
            }
        }
        try await a.engine.sendChanges()
        #expect(try await a.engine.pendingCount() == 0)
        #expect(cloud.records(in: Self.zone).count == Self.pairs.count * 4)
        let c = try await SyncTestDevice("c", cloud: cloud, batchSize: page, fetchPageSize: page)
        try await c.engine.fetchChanges()
        let expected = try await Self.rows(a)
        #expect(expected.count == Self.pairs.count * 4)
        #expect(try await Self.rows(c) == expected)
        // C edits every record; A gets every edit into the right row.
        c.time?.advance()
        try await c.database.write { db in
            try db.execute(sql: "UPDATE games SET title = hex(id)")
            try db.execute(sql: "UPDATE players SET name = hex(id) || '/' || hex(gameID)")
        }
        try await c.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await Self.rows(a) == Self.rows(c))
        let mismatched = try await a.database.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM games WHERE title IS NOT hex(id)")! + Int.fetchOne(
                db, sql: "SELECT count(*) FROM players WHERE name IS NOT hex(id) || '/' || hex(gameID)")!
        }
        #expect(mismatched == 0)
    }

    // 5. Re-keying a row to its look-alike key.
    @Test(arguments: 0..<pairs.count)
    func rekeyToLookAlike(pair: Int) async throws {
        let (first, second) = Self.pairs[pair]
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, 'g')", arguments: [first])
        }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        a.time?.advance()
        try await a.database.write { db in
            try db.execute(sql: "UPDATE games SET id = ? WHERE id = ?", arguments: [second, first])
        }
        try await a.engine.sendChanges()
        #expect(try await a.engine.pendingCount() == 0)
        try await b.engine.fetchChanges()
        let rowsB = try await Self.rows(b)
        #expect(rowsB == (try await Self.rows(a)))
        #expect(rowsB == ["g \(Self.hex(second)) \(Self.hex("g")) NULL"])
        let names = cloud.records(in: Self.zone).map { Self.hex($0.id.name) }
        #expect(names == [Self.hex(second + ":games")])
        // And back, from B.
        b.time?.advance()
        try await b.database.write { db in
            try db.execute(sql: "UPDATE games SET id = ? WHERE id = ?", arguments: [first, second])
        }
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await Self.rows(a) == ["g \(Self.hex(first)) \(Self.hex("g")) NULL"])
        #expect(try await Self.rows(a) == Self.rows(b))
    }

    // 6. Text values (not keys) changed to a look-alike: the change travels, both directions.
    @Test(arguments: 0..<pairs.count)
    func lookAlikeValueEditsTravel(pair: Int) async throws {
        let (first, second) = Self.pairs[pair]
        let cloud = MockCloud()
        let clock = ManualWallClock()
        let a = try await SyncTestDevice("a", cloud: cloud, time: clock)
        let b = try await SyncTestDevice("b", cloud: cloud, time: clock)
        try await a.database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES ('g', ?)", arguments: [first])
            try db.execute(sql: "INSERT INTO players (id, gameID, name) VALUES ('p', 'g', ?)", arguments: [first])
        }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        clock.advance()
        try await b.database.write { db in
            try db.execute(sql: "UPDATE games SET title = ? WHERE id = 'g'", arguments: [second])
            try db.execute(sql: "UPDATE players SET name = ? WHERE id = 'p'", arguments: [second])
        }
        #expect(try await b.engine.pendingCount() == 2)
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        #expect(try await Self.title(a, "g") == Self.hex(second))
        #expect(try await Self.rows(a) == Self.rows(b))
        // Concurrent: A writes first, B later writes second: the later one wins on both.
        clock.advance()
        try await a.database.write { db in try db.execute(sql: "UPDATE games SET title = ? WHERE id = 'g'", arguments: [first]) }
        clock.advance()
        try await b.database.write { db in try db.execute(sql: "UPDATE games SET title = 'tmp' WHERE id = 'g'") }
        clock.advance()
        try await b.database.write { db in try db.execute(sql: "UPDATE games SET title = ? WHERE id = 'g'", arguments: [second]) }
        try await a.engine.sendChanges()
        try await b.engine.sendChanges()
        try await a.engine.fetchChanges()
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(try await Self.title(a, "g") == Self.hex(second))
        #expect(try await Self.title(b, "g") == Self.hex(second))
    }

    // 7. Resynchronize after look-alikes: nothing merged or lost.
    @Test func resynchronizeKeepsLookAlikesApart() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.database.write { db in
            for (i, (first, second)) in Self.pairs.enumerated() {
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (?, ?), (?, ?)", arguments: [first, "f\(i)", second, "s\(i)"])
            }
        }
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        try await b.engine.resynchronize()
        try await b.engine.sendChanges()
        try await b.engine.fetchChanges()
        try await a.engine.fetchChanges()
        #expect(try await Self.rows(b) == Self.rows(a))
        #expect(try await Self.rows(a).count == Self.pairs.count * 2)
        #expect(cloud.records(in: Self.zone).count == Self.pairs.count * 2)
    }

    // 8. Keys that are not valid UTF-8 (SQLite keeps such TEXT bytes apart, Swift's `String`
    // replaces them with U+FFFD). The engine read them as Strings: the row was not found when
    // sending, a delete went instead, and it never reached the cloud, with nothing pending and
    // no error. Such a key is now refused when written, naming table and column.
    @Test func invalidUTF8KeysAreRefusedWhenWritten() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let error = await #expect(throws: DatabaseError.self) {
            try await a.database.write { db in
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (CAST(x'61FF' AS TEXT), 'one'), (CAST(x'61FE' AS TEXT), 'two')")
            }
        }
        let message = "\(String(describing: error))"
        #expect(message.contains("synced table \"games\": primary key \"id\" must hold valid UTF-8 text"), "\(message)")
        #expect(message.contains("61FF"), "\(message)")
        #expect(try await Self.rows(a).isEmpty)
        #expect(try await a.engine.pendingCount() == 0)
    }
}

extension OutsideUnicodeTests {
    // 8b. A statement with one such key fails whole; the valid key, written again alone, goes.
    @Test func aValidKeyBesideAnInvalidOneGoesOnItsOwn() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        await #expect(throws: DatabaseError.self) {
            try await a.database.write { db in
                try db.execute(sql: "INSERT INTO games (id, title) VALUES (CAST(x'61FF' AS TEXT), 'one'), ('ok', 'fine')")
            }
        }
        try await a.execute("INSERT INTO games (id, title) VALUES ('ok', 'fine')")
        try await a.engine.sendChanges()
        try await b.engine.fetchChanges()
        #expect(cloud.records(in: Self.zone).map { Self.hex($0.id.name) } == ["6F6B3A67616D6573"])
        #expect(try await Self.rows(b) == Self.rows(a))
    }

    // 8c. Every shape of invalid UTF-8 (a lone continuation byte, a lead byte cut short at the
    // end and before ASCII, overlong forms, surrogates, past U+10FFFF, the bytes never used),
    // inserted and re-keyed to: each refused. The valid forms at every boundary, and NUL, go.
    @Test func everyInvalidFormIsRefusedAndEveryValidOneGoes() async throws {
        let invalid = [
            "80", "61BF", "C2", "C261", "E282", "E28261", "F09F98", "F09F9861", "C0AF", "C1BF", "E080AF", "F08282AC",
            "EDA080", "EDBFBF", "F4908080", "F5808080", "FE", "FF", "61FFFE",
        ]
        let valid = ["00", "7F", "C280", "DFBF", "E0A080", "ED9FBF", "EE8080", "EFBFBF", "F0908080", "F48FBFBF", "C3A9", "F09F9880"]
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        for (index, hex) in invalid.enumerated() {
            await #expect(throws: DatabaseError.self, "insert \(hex)") {
                try await a.database.write { db in
                    try db.execute(sql: "INSERT INTO games (id, title) VALUES (CAST(x'\(hex)' AS TEXT), 'bad \(index)')")
                }
            }
        }
        try await a.execute("INSERT INTO games (id, title) VALUES ('rekeyed', 'to be re-keyed')")
        for hex in invalid {
            await #expect(throws: DatabaseError.self, "re-key to \(hex)") {
                try await a.database.write { db in
                    try db.execute(sql: "UPDATE games SET id = CAST(x'\(hex)' AS TEXT) WHERE id = 'rekeyed'")
                }
            }
        }
        for (index, hex) in valid.enumerated() {
            try await a.execute("INSERT INTO games (id, title) VALUES (CAST(x'\(hex)' AS TEXT) || '-\(index)', 'good')")
        }
        try await a.engine.sendChanges()
        #expect(try await a.engine.pendingCount() == 0)
        #expect(cloud.records(in: Self.zone).count == valid.count + 1)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await b.engine.fetchChanges()
        #expect(try await Self.rows(b) == Self.rows(a))
    }

    // 8d. A BLOB key in a TEXT column keeps its type (TEXT affinity converts numbers, not
    // BLOBs): refused as well, and so is NULL, which a TEXT PRIMARY KEY without NOT NULL lets in.
    @Test func blobAndNullKeysAreRefusedInATextColumn() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice(
            "a", cloud: cloud, schema: "CREATE TABLE games (id TEXT PRIMARY KEY, title TEXT)", tables: ["games"])
        for value in ["x'6162'", "NULL"] {
            let error = await #expect(throws: DatabaseError.self, "\(value)") {
                try await a.database.write { db in try db.execute(sql: "INSERT INTO games (id, title) VALUES (\(value), 'x')") }
            }
            #expect("\(String(describing: error))".contains("primary key \"id\" must hold valid UTF-8 text"))
        }
        // A number becomes text under TEXT affinity, and goes.
        try await a.execute("INSERT INTO games (id, title) VALUES (42, 'answer')")
        try await a.engine.sendChanges()
        #expect(cloud.records(in: Self.zone).map(\.id.name) == ["42:games"])
    }
}

extension OutsideUnicodeTests {
    // 9. Keys with an embedded NUL that differ only after it.
    @Test func embeddedNULKeysStayApart() async throws {
        let cloud = MockCloud()
        let a = try await SyncTestDevice("a", cloud: cloud)
        let b = try await SyncTestDevice("b", cloud: cloud)
        try await a.database.write { db in
            try db.execute(sql: "INSERT INTO games (id, title) VALUES ('a' || char(0) || 'b', 'one'), ('a' || char(0) || 'c', 'two')")
        }
        try await a.engine.sendChanges()
        #expect(try await a.engine.pendingCount() == 0)
        try await b.engine.fetchChanges()
        #expect(cloud.records(in: Self.zone).map { Self.hex($0.id.name) }.sorted() == ["6100623A67616D6573", "6100633A67616D6573"])
        #expect(try await Self.rows(b) == Self.rows(a))
    }
}
