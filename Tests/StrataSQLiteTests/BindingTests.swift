import Foundation
import StrataSQLite
import Testing

/// Values bound as arguments are stored with the expected storage class and read back unchanged.
extension UInt64: DatabaseInteger {}

@Suite(.timeLimit(.minutes(5))) struct BindingTests {
    enum Color: String, DatabaseValueConvertible { case red, green }
    enum Level: Int, DatabaseValueConvertible { case low = 1, high = 3 }

    /// Binds `value`, returns SQLite's `typeof` and the value read back.
    func roundTrip<Value: DatabaseValueConvertible>(_ value: Value) throws -> (storage: String?, value: Value?) {
        let queue = try DatabaseQueue()
        return try queue.read { db throws in
            let storage = try String.fetchOne(db, sql: "SELECT typeof(?)", arguments: [value])
            let back = try Value.fetchOne(db, sql: "SELECT ?", arguments: [value])
            return (storage, back)
        }
    }

    @Test func aNamedParameterLeftOutIsNullNotTheCachedStatementsLastValue() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            let sql = "SELECT quote(:a) || ' ' || quote(:b)"
            #expect(try String.fetchOne(db, sql: sql, arguments: ["a": 1, "b": 2]) == "1 2")
            #expect(try String.fetchOne(db, sql: sql, arguments: ["a": 3]) == "3 NULL")
        }
    }

    @Test func anIntegerBeyondInt64IsStoredAsSQLiteStoresOneRealAndDoesNotTrap() throws {
        #expect(UInt64.max.databaseValue == .real(Double(UInt64.max)))
        #expect(try roundTrip(UInt64(1) << 63) == ("real", UInt64(1) << 63))
        #expect(UInt64(42).databaseValue == .integer(42))
    }

    @Test func aColumnNameOutsideTheRowIsEmpty() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            let names = try db.fetchAll(sql: "SELECT 1 AS one") { row in
                [row.columnName(at: 0), row.columnName(at: 5), row.columnName(at: -1)]
            }
            #expect(names == [["one", "", ""]])
        }
    }

    @Test func nilBindsNull() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(try String.fetchOne(db, sql: "SELECT typeof(?)", arguments: [nil as Int?]) == "null")
            #expect(try Bool.fetchOne(db, sql: "SELECT ? IS NULL", arguments: [DatabaseValue.null]) == true)
            #expect(try Int?.fetchOne(db, sql: "SELECT ?", arguments: [nil as String?]) == .some(nil))
        }
    }

    @Test func boolBindsInteger() throws {
        #expect(try roundTrip(true) == ("integer", true))
        #expect(try roundTrip(false) == ("integer", false))
        let queue = try DatabaseQueue()
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT ?", arguments: [true]) } == 1)
    }

    @Test func integersBindInteger() throws {
        #expect(try roundTrip(Int.max) == ("integer", Int.max))
        #expect(try roundTrip(Int.min) == ("integer", Int.min))
        #expect(try roundTrip(Int64(-42)) == ("integer", -42))
        #expect(try roundTrip(Int32.max) == ("integer", Int32.max))
        #expect(try roundTrip(Int16.min) == ("integer", Int16.min))
        #expect(try roundTrip(Int8(-8)) == ("integer", -8))
        #expect(try roundTrip(UInt32.max) == ("integer", UInt32.max))
        #expect(try roundTrip(UInt16(65535)) == ("integer", 65535))
        #expect(try roundTrip(UInt8(255)) == ("integer", 255))
    }

    @Test func floatingPointBindsReal() throws {
        #expect(try roundTrip(3.25) == ("real", 3.25))
        #expect(try roundTrip(-0.1) == ("real", -0.1))
        #expect(try roundTrip(Double.greatestFiniteMagnitude) == ("real", Double.greatestFiniteMagnitude))
        #expect(try roundTrip(Float(1.5)) == ("real", Float(1.5)))
    }

    @Test func stringsBindText() throws {
        #expect(try roundTrip("hello") == ("text", "hello"))
        #expect(try roundTrip("") == ("text", ""))
        let unicode = "Zoë 😀 日本語 \u{0301}e"
        #expect(try roundTrip(unicode) == ("text", unicode))
        #expect(try roundTrip("it's \"quoted\"") == ("text", "it's \"quoted\""))
        let queue = try DatabaseQueue()
        // Byte length, not character count: the whole UTF-8 text was bound.
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT length(CAST(? AS BLOB))", arguments: ["😀"]) } == 4)
        // An empty string is TEXT, not NULL.
        #expect(try queue.read { db in try Bool.fetchOne(db, sql: "SELECT ? IS NULL", arguments: [""]) } == false)
    }

    @Test func stringWithNulCharacterKeepsEveryByte() throws {
        let text = "a\u{0}b"
        #expect(try roundTrip(text) == ("text", text))
    }

    @Test func dataBindsBlob() throws {
        let bytes = Data([0, 1, 2, 255, 0])
        #expect(try roundTrip(bytes) == ("blob", bytes))
        // An empty blob is a blob, not NULL.
        #expect(try roundTrip(Data()) == ("blob", Data()))
        let large = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0) })
        #expect(try roundTrip(large) == ("blob", large))
    }

    @Test func dateBindsSQLiteText() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(try String.fetchOne(db, sql: "SELECT ?", arguments: [date]) == "2023-11-14 22:13:20.123")
            // SQLite's own date functions read the stored text.
            #expect(try String.fetchOne(db, sql: "SELECT date(?)", arguments: [date]) == "2023-11-14")
            #expect(try Int.fetchOne(db, sql: "SELECT unixepoch(?)", arguments: [date]) == 1_700_000_000)
        }
        #expect(try roundTrip(date) == ("text", date))
    }

    @Test func dateTextNamingADayThatDoesNotExistIsNotADate() throws {
        #expect(Date.fromDatabaseValue(.text("2024-02-29")) != nil)
        #expect(Date.fromDatabaseValue(.text("2024-02-30")) == nil)
        #expect(Date.fromDatabaseValue(.text("2023-02-29")) == nil)
        #expect(Date.fromDatabaseValue(.text("2024-04-31 10:00")) == nil)
    }

    @Test func aDateBeyondYear9999IsNeverWrittenAsAnotherDate() throws {
        let far = Date(timeIntervalSince1970: 400_000_000_000)  // the year 14645
        guard case .text(let text) = far.databaseValue else { Issue.record("not text"); return }
        #expect(text.hasPrefix("14645-"))
        #expect(Date.fromDatabaseValue(far.databaseValue) == nil)
    }

    @Test func uuidBindsLowercaseText() throws {
        let uuid = UUID()
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(try String.fetchOne(db, sql: "SELECT ?", arguments: [uuid]) == uuid.uuidString.lowercased())
        }
        #expect(try roundTrip(uuid) == ("text", uuid))
    }

    @Test func optionalsBindWrappedValueOrNull() throws {
        #expect(try roundTrip(Int?.some(5)) == ("integer", .some(5)))
        #expect(try roundTrip(String?.none) == ("null", .some(nil)))
        #expect(try roundTrip(Data?.some(Data([1]))) == ("blob", .some(Data([1]))))
    }

    @Test func rawRepresentableBindsRawValue() throws {
        #expect(try roundTrip(Color.green) == ("text", .green))
        #expect(try roundTrip(Level.high) == ("integer", .high))
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(try String.fetchOne(db, sql: "SELECT ?", arguments: [Color.red]) == "red")
            #expect(try Int.fetchOne(db, sql: "SELECT ?", arguments: [Level.high]) == 3)
        }
    }

    @Test func namedArguments() throws {
        let queue = try makePlayersQueue()
        try queue.write { db throws in
            try db.execute(sql: "INSERT INTO players (name, score) VALUES (:name, @score)", arguments: [":name": "Arthur", "@score": 10])
            // A name without its prefix is looked up with `:`.
            try db.execute(sql: "UPDATE players SET score = :score WHERE name = :name", arguments: ["score": 11, "name": "Arthur"])
            #expect(try Int.fetchOne(db, sql: "SELECT score FROM players WHERE name = ?", arguments: ["Arthur"]) == 11)
            let error = #expect(throws: DatabaseError.self) {
                try db.execute(sql: "UPDATE players SET score = :score", arguments: [":missing": 1])
            }
            #expect(error?.message.contains(":missing") == true)
        }
    }

    @Test func statementReboundWithNewArguments() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            let statement = try db.makeStatement(sql: "SELECT ? * 2")
            for value in 1...3 {
                let doubled = try db.fetchOne(sql: statement.sql, arguments: [value]) { row in try row[0] as Int }
                #expect(doubled == value * 2)
            }
        }
    }
}
