import Foundation

/// The schema every library uses: 10 columns, the same for all of them.
enum Schema {
    static let table = "items"
    static let columns = ["id", "i1", "i2", "i3", "d1", "d2", "t1", "t2", "t3", "b1"]
    static let columnList = columns.joined(separator: ", ")

    static func createTable(_ name: String) -> String {
        """
        CREATE TABLE \(name) (
            id INTEGER PRIMARY KEY,
            i1 INTEGER NOT NULL, i2 INTEGER NOT NULL, i3 INTEGER NOT NULL,
            d1 REAL NOT NULL, d2 REAL NOT NULL,
            t1 TEXT NOT NULL, t2 TEXT NOT NULL, t3 TEXT NOT NULL,
            b1 BLOB NOT NULL)
        """
    }

    static let insertSQL = "INSERT INTO items (\(columnList)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    static let selectAllSQL = "SELECT \(columnList) FROM items"
    static let selectByKeySQL = "SELECT \(columnList) FROM items WHERE id = ?"
    static let updateByKeySQL = "UPDATE items SET i1 = ?, i2 = ?, i3 = ?, d1 = ?, d2 = ?, t1 = ?, t2 = ?, t3 = ?, b1 = ? WHERE id = ?"
    static let deleteByKeySQL = "DELETE FROM items WHERE id = ?"
    /// The statement the writer commits, one row at a time, during concurrent reads.
    static let touchSQL = "UPDATE items SET i3 = i3 + 1 WHERE id = ?"

    /// Untimed: replaces the content of `items` with the first `count` rows of `seed` (none
    /// for an empty table), the same way for every library.
    ///
    /// `DELETE` rather than `DROP TABLE`: Strata's writer authorizer answers SQLITE_IGNORE to
    /// SQLITE_DELETE (to disable the truncate optimization), which also turns `DROP TABLE`
    /// into a silent no-op on Strata connections (SQLite checks SQLITE_DELETE on sqlite_schema
    /// before dropping).
    static func resetSQL(count: Int) -> [String] {
        var statements = [createTable("IF NOT EXISTS items"), "DELETE FROM items"]
        if count > 0 {
            statements.append("INSERT INTO items SELECT * FROM seed WHERE id <= \(count)")
        }
        return statements
    }
}

/// One row of source data, from which each library builds its own record type.
struct SourceRow: Sendable {
    var id: Int64
    var i1: Int64
    var i2: Int64
    var i3: Int64
    var d1: Double
    var d2: Double
    var t1: String
    var t2: String
    var t3: String
    var b1: Data
}

/// Deterministic data: the same rows for every library and every run.
enum Dataset {
    static func rows(count: Int) -> [SourceRow] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        let cities = ["Lyon", "Paris", "Nantes", "Lille", "Toulouse", "Marseille", "Bordeaux", "Rennes"]
        var rows: [SourceRow] = []
        rows.reserveCapacity(count)
        for index in 0..<count {
            let id = Int64(index + 1)
            let r = next()
            var blob = Data(count: 16)
            blob.withUnsafeMutableBytes { bytes in
                bytes.storeBytes(of: r.littleEndian, toByteOffset: 0, as: UInt64.self)
                bytes.storeBytes(of: (r &* 31).littleEndian, toByteOffset: 8, as: UInt64.self)
            }
            rows.append(
                SourceRow(
                    id: id,
                    i1: Int64(r % 1_000_000),
                    i2: Int64((r >> 20) % 1000),
                    i3: Int64(index % 7),
                    d1: Double(r % 100_000) / 100,
                    d2: Double(index) * 0.5,
                    t1: "name \(index)",
                    t2: cities[Int(r % UInt64(cities.count))],
                    t3: "A longer text value, row \(index), to leave the small-string form",
                    b1: blob))
        }
        return rows
    }

    /// The keys 1...count in a deterministic shuffled order.
    static func shuffledKeys(count: Int) -> [Int64] {
        var keys = (1...Int64(max(count, 1))).map { $0 }
        var state: UInt64 = 42
        for index in stride(from: keys.count - 1, to: 0, by: -1) {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let other = Int((state >> 33) % UInt64(index + 1))
            keys.swapAt(index, other)
        }
        return Array(keys.prefix(count))
    }
}

/// A value computed from fetched rows, so the optimizer cannot drop the work, and so the
/// libraries can be checked against one another.
@inline(__always)
func checksum(id: Int64, i1: Int64, d1: Double, t1: String, t3: String, b1: Data) -> Int {
    Int(truncatingIfNeeded: id &+ i1) &+ Int(d1) &+ t1.utf8.count &+ t3.utf8.count &+ b1.count
}
