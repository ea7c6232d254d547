// An outside tester's attempts on the statement cache's recent texts (found by the address and
// length of their UTF-8 bytes before the hash lookup).
//
// A text must always run its own statement: whatever the capacity (0, 1, around the 32 recent
// slots), however its `String` was made (a literal, interpolation, a Substring, decoded bytes,
// built in place, bridged through Foundation), while statements of the same text are busy in
// cursors, across `clearStatementCache()`, evictions and replacements, for texts of one length
// whose storage the allocator hands out again, for texts equal in bytes but in different
// storage, for canonically equivalent texts of equal length, and for multi-statement texts.
// `Statement.sql` of `cachedStatement(sql:)` is checked byte for byte against the text asked for.
import Foundation
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(1)))
struct OutsideStatementCacheTests {
    /// A text of a fixed length (longer than a `String` keeps inline) that selects `value`.
    static func selecting(_ value: Int) -> String {
        "SELECT 'v\(String(format: "%06d", value))' AS value /* heap */"
    }

    static func expected(_ value: Int) -> String { "v" + String(format: "%06d", value) }

    static func queue(capacity: Int) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.statementCacheCapacity = capacity
        return try DatabaseQueue(configuration: configuration)
    }

    /// The text's statement, checked to be the one prepared for exactly its bytes.
    static func expectOwnStatement(
        _ db: Database, _ text: String, _ label: @autoclosure () -> String = "", sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let statement = try db.cachedStatement(sql: text)
        #expect(
            Array(statement.sql.utf8) == Array(text.utf8), "\(label()): asked for \(text), got \(statement.sql)",
            sourceLocation: sourceLocation)
    }

    /// Ways to make a `String` of the same bytes: each in its own storage, or not.
    static func make(_ text: String, way: Int) -> String {
        switch way % 8 {
        case 0: return text
        case 1: return String(decoding: Array(text.utf8), as: UTF8.self)
        case 2:
            // A Substring of a larger text.
            let larger = "xx" + text + "yy"
            return String(larger.dropFirst(2).dropLast(2))
        case 3:
            // A Substring that is the whole text.
            return String(text[...])
        case 4:
            return String(unsafeUninitializedCapacity: text.utf8.count) { buffer in
                _ = buffer.initialize(fromContentsOf: text.utf8)
                return text.utf8.count
            }
        case 5: return NSString(string: text).description
        case 6:
            // Built byte by byte in a string with room to spare.
            var built = ""
            built.reserveCapacity(1_024)
            for character in text { built.append(character) }
            return built
        default: return "\(text)"
        }
    }

    // MARK: - Texts of one length in new storage

    /// Many more distinct texts than the 32 recent slots, of one length, each looked up twice
    /// in a row (so it takes a recent slot) and then dropped, so the next one is often built in
    /// the bytes just freed: every capacity from none to past the recent slots.
    @Test(arguments: [0, 1, 2, 3, 31, 32, 33, 64])
    func textsOfOneLengthInFreedStorageRunTheirOwnStatement(capacity: Int) async throws {
        let queue = try Self.queue(capacity: capacity)
        try await queue.writeWithoutTransaction { db throws in
            var random = OutsideCacheRandom(seed: UInt64(capacity) + 1)
            for round in 0..<2_000 {
                let value = round < 200 ? round : Int.random(in: 0..<80, using: &random)
                let text = Self.make(Self.selecting(value), way: round)
                #expect(try String.fetchOne(db, sql: text) == Self.expected(value), "round \(round), capacity \(capacity)")
                #expect(try String.fetchOne(db, sql: text) == Self.expected(value), "round \(round), capacity \(capacity)")
                try Self.expectOwnStatement(db, text, "round \(round)")
                try db.execute(sql: text)
            }
            #expect(db.cachedStatementCount <= capacity)
            if capacity == 0 {
                let text = Self.selecting(1)
                #expect(try db.cachedStatement(sql: text) !== db.cachedStatement(sql: text))
            }
        }
    }

    /// A text cached and found through its recent slot, the cache cleared, the text dropped,
    /// and a text of the same length built right after (likely in the same bytes): it runs its
    /// own statement.
    @Test(arguments: [1, 2, 32, 64])
    func aTextBuiltWhereAClearedOneWasRunsItsOwnStatement(capacity: Int) async throws {
        let queue = try Self.queue(capacity: capacity)
        try await queue.writeWithoutTransaction { db throws in
            for round in 0..<500 {
                do {
                    let text = Self.make(Self.selecting(round), way: 6)
                    #expect(try String.fetchOne(db, sql: text) == Self.expected(round))
                    #expect(try String.fetchOne(db, sql: text) == Self.expected(round))
                    if round % 2 == 0 { db.clearStatementCache() }
                }
                let next = Self.make(Self.selecting(round + 100_000), way: 6)
                #expect(try String.fetchOne(db, sql: next) == Self.expected(round + 100_000), "round \(round)")
                try Self.expectOwnStatement(db, next)
            }
        }
    }

    /// A `var` text found through its recent slot, then changed in place to another text of the
    /// same length (a byte replaced, or the last character removed and another appended): the
    /// changed text runs its own statement, and the cached one still runs the original.
    @Test func aTextChangedInPlaceToTheSameLengthRunsItsOwnStatement() async throws {
        let queue = try DatabaseQueue()
        try await queue.writeWithoutTransaction { db throws in
            for round in 0..<300 {
                var text = ""
                text.reserveCapacity(256)
                text += "SELECT \(round % 10) AS value /* a text long enough */"
                let original = round % 10
                #expect(try Int.fetchOne(db, sql: text) == original)
                #expect(try Int.fetchOne(db, sql: text) == original)
                // Replace the digit in place.
                let digit = text.index(text.startIndex, offsetBy: 7)
                text.replaceSubrange(digit...digit, with: "\((original + 1) % 10)")
                #expect(try Int.fetchOne(db, sql: text) == (original + 1) % 10, "round \(round): \(text)")
                try Self.expectOwnStatement(db, text)
                // Remove the last character and append another: same length again.
                text.removeLast(3)
                text += "-*/"
                #expect(try Int.fetchOne(db, sql: text) == (original + 1) % 10)
                try Self.expectOwnStatement(db, text)
            }
        }
    }

    // MARK: - Same bytes, other storage; other bytes, equal strings

    /// The same bytes in every kind of storage find one statement and run it; after it is
    /// evicted or cleared, each finds the new one.
    @Test(arguments: [1, 2, 64])
    func theSameBytesInOtherStorageFindTheSameStatement(capacity: Int) async throws {
        let queue = try Self.queue(capacity: capacity)
        try await queue.writeWithoutTransaction { db throws in
            let text = Self.selecting(42)
            let copies = (0..<8).map { Self.make(text, way: $0) }
            for round in 0..<50 {
                let first = try db.cachedStatement(sql: copies[round % 8])
                for copy in copies {
                    #expect(try db.cachedStatement(sql: copy) === first, "round \(round)")
                    #expect(try String.fetchOne(db, sql: copy) == Self.expected(42))
                }
                switch round % 3 {
                case 0: db.clearStatementCache()
                case 1: for other in 0..<capacity { _ = try db.cachedStatement(sql: Self.selecting(1_000 + other)) }
                default: break
                }
            }
        }
    }

    /// Texts of equal length that Swift's `String` takes for equal (combining marks in another
    /// order, precomposed and decomposed characters swapped) but whose bytes differ: SQLite reads
    /// different literals, so each must run its own statement, also through a recent slot.
    @Test func canonicallyEquivalentTextsOfOneLengthRunTheirOwnStatements() async throws {
        let literals = [
            ("d\u{323}\u{307}", "d\u{307}\u{323}"),
            ("\u{E9}e\u{301}", "e\u{301}\u{E9}"),
            ("\u{1E0B}\u{323}", "\u{1E0D}\u{307}"),
            ("a\u{301}\u{316}", "a\u{316}\u{301}"),
        ]
        let queue = try DatabaseQueue()
        try await queue.writeWithoutTransaction { db throws in
            for (left, right) in literals {
                let leftText = "SELECT hex(CAST('\(left)' AS BLOB)) /* padding */"
                let rightText = "SELECT hex(CAST('\(right)' AS BLOB)) /* padding */"
                #expect(leftText == rightText)
                #expect(leftText.utf8.count == rightText.utf8.count)
                #expect(Array(leftText.utf8) != Array(rightText.utf8))
                let leftHex = left.utf8.map { String(format: "%02X", $0) }.joined()
                let rightHex = right.utf8.map { String(format: "%02X", $0) }.joined()
                for round in 0..<20 {
                    let (l, r) = (Self.make(leftText, way: round), Self.make(rightText, way: round + 3))
                    #expect(try String.fetchOne(db, sql: l) == leftHex, "round \(round)")
                    #expect(try String.fetchOne(db, sql: r) == rightHex, "round \(round)")
                    #expect(try String.fetchOne(db, sql: leftText) == leftHex)
                    #expect(try String.fetchOne(db, sql: rightText) == rightHex)
                    try Self.expectOwnStatement(db, l)
                    try Self.expectOwnStatement(db, r)
                    #expect(try db.cachedStatement(sql: leftText) !== db.cachedStatement(sql: rightText))
                }
            }
        }
    }

    /// Texts around the 15-byte inline limit, and texts that differ only in their last byte or
    /// only in their length.
    @Test func textsAroundTheInlineLimit() async throws {
        let queue = try Self.queue(capacity: 4)
        try await queue.writeWithoutTransaction { db throws in
            // 14, 15, 16 and 17 bytes.
            let texts = ["SELECT 1234567", "SELECT 12345678", "SELECT 123456789", "SELECT 1234567890"]
            for round in 0..<200 {
                for (index, text) in texts.enumerated() {
                    let made = Self.make(text, way: round + index)
                    #expect(try Int.fetchOne(db, sql: made) == Int(text.dropFirst(7)), "\(text), round \(round)")
                    try Self.expectOwnStatement(db, made)
                }
                // A prefix of a cached text: same address as a slice of it would be, shorter.
                let long = Self.make("SELECT 1234567890", way: 6)
                #expect(try Int.fetchOne(db, sql: long) == 1_234_567_890)
                #expect(try Int.fetchOne(db, sql: String(long.prefix(16))) == 123_456_789)
            }
        }
    }

    // MARK: - Busy statements

    /// A cursor left stepping on a text while the same text (in other storage too) is fetched,
    /// executed and looked up, the cache cleared and filled past its capacity: every use runs
    /// the text, and the cursor goes on to its own end.
    @Test(arguments: [0, 1, 2, 32, 33])
    func busyStatementsAmongEvictionsAndClears(capacity: Int) async throws {
        let queue = try Self.queue(capacity: capacity)
        try await queue.writeWithoutTransaction { db throws in
            let rows = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 5) SELECT x FROM c /* rows */"
            var random = OutsideCacheRandom(seed: 77 + UInt64(capacity))
            for round in 0..<100 {
                var cursors = try (0..<3).map { way in (try Int.fetchCursor(db, sql: Self.make(rows, way: way + round)), [Int]()) }
                while !cursors.isEmpty {
                    let pick = Int.random(in: 0..<cursors.count, using: &random)
                    if let value = try cursors[pick].0.next() {
                        cursors[pick].1.append(value)
                    } else {
                        #expect(cursors[pick].1 == [1, 2, 3, 4, 5], "round \(round)")
                        cursors.remove(at: pick)
                    }
                    switch Int.random(in: 0..<6, using: &random) {
                    case 0: db.clearStatementCache()
                    case 1:
                        for other in 0..<(capacity + 1) {
                            let text = Self.selecting(other * 7 + round)
                            #expect(try String.fetchOne(db, sql: text) == Self.expected(other * 7 + round))
                        }
                    case 2: try db.execute(sql: Self.make(rows, way: round))
                    case 3: try Self.expectOwnStatement(db, Self.make(rows, way: round + 1))
                    default: #expect(try Int.fetchAll(db, sql: Self.make(rows, way: round + 2)) == [1, 2, 3, 4, 5])
                    }
                }
            }
        }
    }

    // MARK: - Multi-statement texts

    /// Multi-statement texts run every statement every time, also when their first statement is
    /// a cached text of its own, and a text with a NUL is refused every time although its part
    /// before the NUL is cached.
    @Test func multiStatementTextsRunEveryStatementEveryTime() async throws {
        let queue = try Self.queue(capacity: 2)
        try await queue.writeWithoutTransaction { db throws in
            try db.execute(sql: "CREATE TABLE log (v TEXT)")
            let first = "INSERT INTO log VALUES ('first statement')"
            let both = first + "; INSERT INTO log VALUES ('second statement')"
            let trailing = first + " ;  \n;"
            let withNUL = first + "\u{0}; DELETE FROM log"
            for round in 0..<50 {
                try db.execute(sql: Self.make(first, way: round))
                try db.execute(sql: Self.make(both, way: round))
                try db.execute(sql: Self.make(both, way: round + 1))
                try db.execute(sql: Self.make(trailing, way: round))
                #expect(throws: DatabaseError.self) { try db.execute(sql: Self.make(withNUL, way: round)) }
                if round % 5 == 0 { db.clearStatementCache() }
            }
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM log WHERE v = 'first statement'") == 200)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM log WHERE v = 'second statement'") == 100)
        }
    }

    // MARK: - A seeded workload

    /// A random mix of lookups, fetches, inserts, open cursors, clears and texts built every way,
    /// against a model of what each must return.
    @Test(arguments: [0, 1, 3, 31, 32, 33, 64])
    func aSeededWorkloadAgainstAModel(capacity: Int) async throws {
        let queue = try Self.queue(capacity: capacity)
        try await queue.writeWithoutTransaction { db throws in
            try db.execute(sql: "CREATE TABLE log (v TEXT)")
            var random = OutsideCacheRandom(seed: 0x5EED + UInt64(capacity))
            // Long-lived texts (stable storage, the recent slots' case) and values built anew.
            let kept = (0..<48).map { Self.selecting($0) }
            var inserted: [String: Int] = [:]
            var cursors: [(cursor: RecordCursor<String>, value: Int)] = []
            for round in 0..<3_000 {
                let value = Int.random(in: 0..<48, using: &random)
                let text = Bool.random(using: &random) ? kept[value] : Self.make(Self.selecting(value), way: round)
                switch Int.random(in: 0..<10, using: &random) {
                case 0, 1, 2: #expect(try String.fetchOne(db, sql: text) == Self.expected(value), "round \(round)")
                case 3: #expect(try String.fetchAll(db, sql: text) == [Self.expected(value)], "round \(round)")
                case 4: try Self.expectOwnStatement(db, text, "round \(round)")
                case 5:
                    let insert = Self.make("INSERT INTO log VALUES ('\(Self.expected(value))') -- log", way: round)
                    try db.execute(sql: insert)
                    inserted[Self.expected(value), default: 0] += 1
                case 6:
                    if cursors.count < 4 {
                        let cursor = try String.fetchCursor(db, sql: text)
                        #expect(try cursor.next() == Self.expected(value), "round \(round)")
                        cursors.append((cursor, value))
                    }
                case 7:
                    if let last = cursors.popLast() { #expect(try last.cursor.next() == nil, "round \(round)") }
                case 8: if Int.random(in: 0..<20, using: &random) == 0 { db.clearStatementCache() }
                default:
                    let row = try db.fetchOne(sql: text) { row throws -> String in try row[0] }
                    #expect(row == Self.expected(value), "round \(round)")
                }
            }
            for (cursor, _) in cursors { #expect(try cursor.next() == nil) }
            let counts = try db.fetchAll(sql: "SELECT v, count(*) FROM log GROUP BY v") { row throws -> (String, Int) in
                (try row[0], try row[1])
            }
            #expect(Dictionary(uniqueKeysWithValues: counts) == inserted)
            if capacity > 0 { #expect(db.cachedStatementCount <= capacity + 4) }
        }
    }
}

/// A small seeded generator (SplitMix64), so a failing case comes back on every run.
private struct OutsideCacheRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
