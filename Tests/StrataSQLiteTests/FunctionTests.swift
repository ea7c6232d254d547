import Foundation
import StrataSQLite
import StrataTestSupport
import Testing

@Suite(.timeLimit(.minutes(5))) struct FunctionTests {
    struct Refusal: Error, CustomStringConvertible {
        var description: String { "refused to compute with 13" }
    }

    @Test func typedFunctionsWithZeroToThreeArguments() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.add(function: DatabaseFunction("answer") { () -> Int in 42 })
            try db.add(function: DatabaseFunction("shout") { (text: String) in text.uppercased() + "!" })
            try db.add(function: DatabaseFunction("plus") { (a: Int, b: Int) in a + b })
            try db.add(
                function: DatabaseFunction("describe") { (name: String, count: Int, ratio: Double?) in
                    "\(name):\(count):\(ratio.map { String($0) } ?? "none")"
                })
            #expect(try Int.fetchOne(db, sql: "SELECT answer()") == 42)
            #expect(try String.fetchOne(db, sql: "SELECT shout(?)", arguments: ["hé"]) == "HÉ!")
            #expect(try Int.fetchOne(db, sql: "SELECT plus(2, 40)") == 42)
            #expect(try String.fetchOne(db, sql: "SELECT describe('x', 3, 0.5)") == "x:3:0.5")
            #expect(try String.fetchOne(db, sql: "SELECT describe('x', 3, NULL)") == "x:3:none")
            // The argument count is enforced by SQLite.
            let error = #expect(throws: DatabaseError.self) { try Int.fetchOne(db, sql: "SELECT plus(1)") }
            #expect(error?.message.contains("wrong number of arguments to function plus()") == true)
        }
    }

    @Test func typedFunctionResultsOfEveryKind() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.add(function: DatabaseFunction("maybe") { (flag: Bool) -> String? in flag ? "yes" : nil })
            try db.add(function: DatabaseFunction("bytes") { (count: Int) in Data(repeating: 7, count: count) })
            try db.add(function: DatabaseFunction("half") { (value: Double) in value / 2 })
            #expect(try String?.fetchOne(db, sql: "SELECT maybe(1)") == .some("yes"))
            #expect(try String?.fetchOne(db, sql: "SELECT maybe(0)") == .some(nil))
            #expect(try String.fetchOne(db, sql: "SELECT typeof(bytes(0))") == "blob")
            #expect(try Data.fetchOne(db, sql: "SELECT bytes(3)") == Data([7, 7, 7]))
            #expect(try Double.fetchOne(db, sql: "SELECT half(3)") == 1.5)
        }
    }

    @Test func rawVariadicFunction() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            let function = DatabaseFunction("kinds", argumentCount: nil) { values in
                values.map(\.storageClassName).joined(separator: ",")
            }
            try db.add(function: function)
            #expect(function.argumentCount == nil)
            #expect(try String.fetchOne(db, sql: "SELECT kinds()") == "")
            #expect(try String.fetchOne(db, sql: "SELECT kinds(1, 2.5, 'a', X'00', NULL)") == "INTEGER,REAL,TEXT,BLOB,NULL")
            try db.add(
                function: DatabaseFunction("total", argumentCount: nil) { values in
                    values.reduce(0) { sum, value in sum + (Int.fromDatabaseValue(value) ?? 0) }
                })
            #expect(try Int.fetchOne(db, sql: "SELECT total(1, 2, 3, 4)") == 10)
            // A raw function returning nil gives NULL.
            try db.add(function: DatabaseFunction("no_value", argumentCount: 0) { _ in nil })
            #expect(try Int?.fetchOne(db, sql: "SELECT no_value()") == .some(nil))
        }
    }

    @Test func deterministicFunctionInIndexAndGeneratedColumn() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.add(
                function: DatabaseFunction("slug", deterministic: true) { (text: String) in
                    text.lowercased().replacingOccurrences(of: " ", with: "-")
                })
            try db.execute(
                sql: """
                    CREATE TABLE games (title TEXT, slug TEXT GENERATED ALWAYS AS (slug(title)) VIRTUAL);
                    CREATE INDEX games_slug ON games (slug(title));
                    INSERT INTO games (title) VALUES ('Hello World'), ('Tic Tac Toe');
                    """)
            #expect(try String.fetchAll(db, sql: "SELECT slug FROM games ORDER BY title") == ["hello-world", "tic-tac-toe"])
            // The index is used to look up by expression.
            let plan = try db.fetchAll(sql: "EXPLAIN QUERY PLAN SELECT title FROM games WHERE slug(title) = 'tic-tac-toe'") { row in
                try row[3] as String
            }
            #expect(plan.contains { $0.contains("games_slug") }, "\(plan)")
            #expect(try String.fetchOne(db, sql: "SELECT title FROM games WHERE slug(title) = 'tic-tac-toe'") == "Tic Tac Toe")
        }
    }

    @Test func nonDeterministicFunctionIsRefusedInAnIndex() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.add(function: DatabaseFunction("slug") { (text: String) in text.lowercased() })
            try db.execute(sql: "CREATE TABLE games (title TEXT); INSERT INTO games VALUES ('A')")
            let error = #expect(throws: DatabaseError.self) {
                try db.execute(sql: "CREATE INDEX games_slug ON games (slug(title))")
            }
            #expect(error?.message.contains("non-deterministic functions prohibited") == true)
        }
    }

    @Test func throwingFunctionErrorReachesTheCaller() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.add(
                function: DatabaseFunction("checked") { (value: Int) throws -> Int in
                    if value == 13 { throw Refusal() }
                    return value
                })
            #expect(try Int.fetchOne(db, sql: "SELECT checked(12)") == 12)
            let error = #expect(throws: DatabaseError.self) {
                try Int.fetchOne(db, sql: "SELECT checked(13)")
            }
            #expect(error?.message == "refused to compute with 13")
            #expect(error?.sql == "SELECT checked(13)")
            // The statement and connection keep working.
            #expect(try Int.fetchOne(db, sql: "SELECT checked(1)") == 1)
        }
    }

    @Test func argumentTypeMismatchNamesTheFunction() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.add(function: DatabaseFunction("double") { (value: Int) in value * 2 })
            let error = #expect(throws: DatabaseError.self) {
                try Int.fetchOne(db, sql: "SELECT double('ten')")
            }
            #expect(error?.message == "double(): argument 1 is TEXT 'ten', expected Int")
            let nullError = #expect(throws: DatabaseError.self) {
                try Int.fetchOne(db, sql: "SELECT double(NULL)")
            }
            #expect(nullError?.message.contains("double(): argument 1 is NULL") == true)
            try db.add(function: DatabaseFunction("pair") { (a: Int, b: String) in "\(a)\(b)" })
            let second = #expect(throws: DatabaseError.self) { try String.fetchOne(db, sql: "SELECT pair(1, 2)") }
            #expect(second?.message.contains("pair(): argument 2 is INTEGER 2, expected String") == true)
        }
    }

    @Test func removeFunction() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            let function = DatabaseFunction("seven") { () -> Int in 7 }
            try db.add(function: function)
            #expect(try Int.fetchOne(db, sql: "SELECT seven()") == 7)
            try db.remove(function: function)
            let error = #expect(throws: DatabaseError.self) { try Int.fetchOne(db, sql: "SELECT seven()") }
            #expect(error?.message.contains("no such function: seven") == true)
            // It can be added again.
            try db.add(function: function)
            #expect(try Int.fetchOne(db, sql: "SELECT seven()") == 7)
        }
    }

    @Test func replacingAFunctionUsesTheNewBody() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.add(function: DatabaseFunction("version") { () -> Int in 1 })
            try db.add(function: DatabaseFunction("version") { () -> Int in 2 })
            #expect(try Int.fetchOne(db, sql: "SELECT version()") == 2)
        }
    }

    @Test func functionsFromPrepareDatabaseExistOnEveryPoolConnection() throws {
        try withTemporaryDatabasePath { path in
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                try db.add(function: DatabaseFunction("triple", deterministic: true) { (value: Int) in value * 3 })
            }
            let pool = try DatabasePool(path: path, configuration: configuration)
            #expect(try pool.write { db in try Int.fetchOne(db, sql: "SELECT triple(2)") } == 6)
            #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT triple(3)") } == 9)
        }
    }
}
