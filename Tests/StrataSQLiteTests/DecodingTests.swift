import Foundation
import StrataSQLite
import Testing

/// Stored values decode into every supported Swift type; values that cannot be represented fail.
@Suite(.timeLimit(.minutes(5))) struct DecodingTests {
    enum Color: String, DatabaseValueConvertible { case red, green }

    /// A user type stored as one value.
    struct Email: DatabaseValueConvertible, Equatable {
        var rawValue: String
        var databaseValue: DatabaseValue { .text(rawValue.lowercased()) }
        static func fromDatabaseValue(_ value: DatabaseValue) -> Email? {
            guard case .text(let text) = value, text.contains("@") else { return nil }
            return Email(rawValue: text)
        }
    }

    func fetch<Value: DatabaseValueConvertible>(_ type: Value.Type, _ sql: String) throws -> Value? {
        let queue = try DatabaseQueue()
        return try queue.read { db in try Value.fetchOne(db, sql: sql) }
    }

    func decodingFails<Value: DatabaseValueConvertible>(_ type: Value.Type, _ sql: String) throws -> Bool {
        do {
            _ = try fetch(Value.self, sql)
            return false
        } catch is RowDecodingError {
            return true
        }
    }

    @Test func integers() throws {
        #expect(try fetch(Int.self, "SELECT 42") == 42)
        #expect(try fetch(Int64.self, "SELECT -9223372036854775808") == Int64.min)
        #expect(try fetch(Int32.self, "SELECT 2147483647") == Int32.max)
        #expect(try fetch(UInt8.self, "SELECT 200") == 200)
        // A REAL holding an exact integer decodes; a fractional one does not.
        #expect(try fetch(Int.self, "SELECT 3.0") == 3)
        #expect(try decodingFails(Int.self, "SELECT 3.5"))
        // Out of range for the requested width.
        #expect(try decodingFails(Int8.self, "SELECT 300"))
        #expect(try decodingFails(UInt8.self, "SELECT -1"))
        #expect(try decodingFails(Int32.self, "SELECT 2147483648"))
        // TEXT, BLOB and NULL are not integers.
        #expect(try decodingFails(Int.self, "SELECT '12'"))
        #expect(try decodingFails(Int.self, "SELECT X'01'"))
        #expect(try decodingFails(Int.self, "SELECT NULL"))
    }

    @Test func bool() throws {
        #expect(try fetch(Bool.self, "SELECT 1") == true)
        #expect(try fetch(Bool.self, "SELECT 0") == false)
        #expect(try fetch(Bool.self, "SELECT 7") == true)
        #expect(try fetch(Bool.self, "SELECT 0.0") == false)
        #expect(try decodingFails(Bool.self, "SELECT 'true'"))
    }

    @Test func doubleAndFloat() throws {
        #expect(try fetch(Double.self, "SELECT 1.5") == 1.5)
        #expect(try fetch(Double.self, "SELECT 2") == 2.0)
        #expect(try fetch(Float.self, "SELECT 0.25") == 0.25)
        #expect(try decodingFails(Double.self, "SELECT 'x'"))
        #expect(try decodingFails(Float.self, "SELECT NULL"))
    }

    @Test func strings() throws {
        #expect(try fetch(String.self, "SELECT 'abc'") == "abc")
        #expect(try fetch(String.self, "SELECT ''") == "")
        #expect(try fetch(String.self, "SELECT 'Zoë 😀'") == "Zoë 😀")
        // Numbers are not silently converted to text.
        #expect(try decodingFails(String.self, "SELECT 1"))
        #expect(try decodingFails(String.self, "SELECT NULL"))
    }

    @Test func data() throws {
        #expect(try fetch(Data.self, "SELECT X'DEADBEEF'") == Data([0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(try fetch(Data.self, "SELECT X''") == Data())
        #expect(try fetch(Data.self, "SELECT zeroblob(0)") == Data())
        // TEXT decodes as its UTF-8 bytes.
        #expect(try fetch(Data.self, "SELECT 'hé'") == Data("hé".utf8))
        #expect(try decodingFails(Data.self, "SELECT 1"))
        #expect(try decodingFails(Data.self, "SELECT NULL"))
    }

    @Test func dateRoundTripKeepsMilliseconds() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(sql: "CREATE TABLE events (at TEXT)")
            // Every millisecond of one second: a Double's `* 1000` can land a hair below the
            // exact millisecond, which must not lose one.
            for millisecond in 0..<1000 {
                let date = Date(timeIntervalSince1970: Double(1_700_000_000_000 + millisecond) / 1000)
                try db.execute(sql: "DELETE FROM events")
                try db.execute(sql: "INSERT INTO events VALUES (?)", arguments: [date])
                let back = try Date.fetchOne(db, sql: "SELECT at FROM events")
                #expect(back == date, "millisecond \(millisecond)")
                let text = try String.fetchOne(db, sql: "SELECT at FROM events")
                #expect(text?.hasSuffix(String(format: ".%03d", millisecond)) == true, "\(text ?? "nil")")
            }
        }
    }

    @Test func datesBeforeTheEpochAndFarFuture() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            for date in [
                Date(timeIntervalSince1970: -86_400.5), Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 4_102_444_800.999),
            ] {
                #expect(try Date.fetchOne(db, sql: "SELECT ?", arguments: [date]) == date)
            }
            #expect(try String.fetchOne(db, sql: "SELECT ?", arguments: [Date(timeIntervalSince1970: -0.5)]) == "1969-12-31 23:59:59.500")
        }
    }

    @Test func distantDatesRoundTrip() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(try String.fetchOne(db, sql: "SELECT ?", arguments: [Date.distantFuture]) == "4001-01-01 00:00:00.000")
            // Proleptic Gregorian, like SQLite (Foundation's distantPast is 0001-01-01 Julian).
            #expect(try String.fetchOne(db, sql: "SELECT ?", arguments: [Date.distantPast]) == "0000-12-30 00:00:00.000")
            // Strata formats dates exactly as SQLite's own strftime does.
            for seconds in [-62_135_769_600.0, -1.5, 0, 951_782_400.25, 1_709_208_000.999, 64_092_211_199.5] {
                let date = Date(timeIntervalSince1970: seconds)
                let sqlite = try String.fetchOne(db, sql: "SELECT strftime('%Y-%m-%d %H:%M:%f', ?, 'unixepoch')", arguments: [seconds])
                #expect(try String.fetchOne(db, sql: "SELECT ?", arguments: [date]) == sqlite, "\(seconds)")
            }
            #expect(try Date.fetchOne(db, sql: "SELECT ?", arguments: [Date.distantFuture]) == .distantFuture)
            #expect(try Date.fetchOne(db, sql: "SELECT ?", arguments: [Date.distantPast]) == .distantPast)
            #expect(try Date.fetchOne(db, sql: "SELECT '2024-02-29 12:00:00'") == Date(timeIntervalSince1970: 1_709_208_000))
        }
    }

    @Test(arguments: [
        ("2023-11-14 22:13:20.123", 1_700_000_000.123),
        ("2023-11-14T22:13:20.123Z", 1_700_000_000.123),
        ("2023-11-14T22:13:20Z", 1_700_000_000.0),
        ("2023-11-14 22:13:20", 1_700_000_000.0),
        ("2023-11-14 22:13", 1_699_999_980.0),
        ("2023-11-14", 1_699_920_000.0),
        ("2023-11-14 22:13:20.5", 1_700_000_000.5),
    ])
    func dateParsesAcceptedTextForms(text: String, seconds: Double) throws {
        #expect(try fetch(Date.self, "SELECT '\(text)'") == Date(timeIntervalSince1970: seconds))
    }

    @Test func dateRejectsOtherText() throws {
        for text in ["yesterday", "2023-13-01", "2023-11-14 25:00", "2023/11/14", "2023-11-14 22:13:20.", ""] {
            #expect(try decodingFails(Date.self, "SELECT '\(text)'"), "\(text)")
        }
    }

    @Test func dateFromUnixTime() throws {
        #expect(try fetch(Date.self, "SELECT 1700000000") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try fetch(Date.self, "SELECT 1700000000.25") == Date(timeIntervalSince1970: 1_700_000_000.25))
        #expect(try decodingFails(Date.self, "SELECT X'00'"))
    }

    @Test func uuidFromTextAndBlob() throws {
        let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        #expect(try fetch(UUID.self, "SELECT 'e621e1f8-c36c-495a-93fc-0c247a3e6e5f'") == uuid)
        #expect(try fetch(UUID.self, "SELECT 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'") == uuid)
        #expect(try fetch(UUID.self, "SELECT X'E621E1F8C36C495A93FC0C247A3E6E5F'") == uuid)
        let bytes = withUnsafeBytes(of: uuid.uuid) { Data($0) }
        let queue = try DatabaseQueue()
        #expect(try queue.read { db in try UUID.fetchOne(db, sql: "SELECT ?", arguments: [bytes]) } == uuid)
        #expect(try decodingFails(UUID.self, "SELECT X'E621E1F8'"))
        #expect(try decodingFails(UUID.self, "SELECT 'not-a-uuid'"))
        #expect(try decodingFails(UUID.self, "SELECT 1"))
    }

    @Test func optionalsDistinguishNullFromNoRow() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(try Int?.fetchOne(db, sql: "SELECT NULL") == .some(nil))
            #expect(try Int?.fetchOne(db, sql: "SELECT 1 WHERE 0") == nil)
            #expect(try Int?.fetchOne(db, sql: "SELECT 4") == .some(4))
            #expect(try Int.fetchOne(db, sql: "SELECT 1 WHERE 0") == nil)
            // A non-NULL value of the wrong type still fails for an optional.
            #expect(throws: RowDecodingError.self) { try Int?.fetchOne(db, sql: "SELECT 'x'") }
            #expect(try String?.fetchAll(db, sql: "SELECT NULL UNION ALL SELECT 'a'") == [nil, "a"])
        }
    }

    @Test func rawRepresentable() throws {
        #expect(try fetch(Color.self, "SELECT 'red'") == .red)
        #expect(try decodingFails(Color.self, "SELECT 'blue'"))
        #expect(try decodingFails(Color.self, "SELECT 1"))
        #expect(try fetch(Color?.self, "SELECT NULL") == .some(nil))
    }

    @Test func userTypeConformingToDatabaseValueConvertible() throws {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(sql: "CREATE TABLE users (email TEXT)")
            try db.execute(sql: "INSERT INTO users VALUES (?)", arguments: [Email(rawValue: "Ann@Example.com")])
            #expect(try String.fetchOne(db, sql: "SELECT email FROM users") == "ann@example.com")
            #expect(try Email.fetchOne(db, sql: "SELECT email FROM users") == Email(rawValue: "ann@example.com"))
            #expect(try Email?.fetchOne(db, sql: "SELECT NULL") == .some(nil))
            let error = #expect(throws: RowDecodingError.self) { try Email.fetchOne(db, sql: "SELECT 'no-at-sign' AS email") }
            #expect(error?.expectedType.contains("Email") == true)
        }
    }

    @Test func databaseValueReadsEveryStorageClass() throws {
        let queue = try DatabaseQueue()
        let values = try queue.read { db throws in
            try db.fetchOne(sql: "SELECT NULL, 1, 1.5, 'a', X'01'") { row in row.copyValues() }
        }
        #expect(values == [.null, .integer(1), .real(1.5), .text("a"), .blob(Data([1]))])
        #expect(values?.map(\.storageClassName) == ["NULL", "INTEGER", "REAL", "TEXT", "BLOB"])
        #expect(values?.map(\.description) == ["NULL", "1", "1.5", "'a'", "X'01'"])
    }

    @Test func rowAccessByIndexAndName() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            try db.fetchOne(sql: "SELECT 1 AS id, 'Ann' AS Name, NULL AS score") { row throws in
                #expect(row.count == 3)
                #expect(row.columnName(at: 1) == "Name")
                #expect(try row[0] as Int == 1)
                #expect(try row["name"] as String == "Ann")  // case-insensitive
                #expect(try row["score"] as Int? == nil)
                #expect(row.isNull(at: 2))
                #expect(!row.isNull(at: 0))
                let missing = #expect(throws: RowDecodingError.self) { try row["nope"] as Int }
                #expect(missing?.columnName == "nope")
                let outOfRange = #expect(throws: RowDecodingError.self) { try row[3] as Int }
                #expect(outOfRange?.columnIndex == 3)
            }
        }
    }
}
