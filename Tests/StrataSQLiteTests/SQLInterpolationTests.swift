import Foundation
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct SQLInterpolationTests {
    func makeQueue() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE students (id INTEGER PRIMARY KEY, name TEXT NOT NULL)") }
        return queue
    }

    @Test func interpolatedValuesBecomeArguments() {
        let id = 5
        let name = "Ann"
        let sql: SQL = "UPDATE students SET name = \(name) WHERE id = \(id)"
        #expect(sql.text == "UPDATE students SET name = ? WHERE id = ?")
        #expect(sql.arguments.map(\.databaseValue) == [.text("Ann"), .integer(5)])
        #expect(sql.statementArguments.description == "['Ann', 5]")
        #expect(sql.description == sql.text)
    }

    @Test func injectionLookingStringsAreBound() throws {
        let queue = try makeQueue()
        let hostile = "Robert'); DROP TABLE students;--"
        try queue.write { db in
            try db.execute("INSERT INTO students (name) VALUES (\(hostile))")
            try db.execute("INSERT INTO students (name) VALUES (\("' OR 1=1 --"))")
        }
        try queue.read { db throws in
            #expect(try db.tableExists("students"))
            #expect(try String.fetchAll(db, sql: "SELECT name FROM students ORDER BY id") == [hostile, "' OR 1=1 --"])
            // A lookup with an injection-looking value matches nothing instead of everything.
            #expect(try String.fetchAll(db, "SELECT name FROM students WHERE name = \("x' OR '1'='1")") == [])
            #expect(try String.fetchOne(db, "SELECT name FROM students WHERE name = \(hostile)") == hostile)
        }
    }

    @Test func listInterpolation() throws {
        let queue = try makeQueue()
        try queue.write { db in
            for name in ["a", "b", "c", "d"] { try db.execute("INSERT INTO students (name) VALUES (\(name))") }
        }
        let ids = [1, 3, 4]
        let sql: SQL = "SELECT name FROM students WHERE id IN (\(list: ids)) ORDER BY id"
        #expect(sql.text == "SELECT name FROM students WHERE id IN (?, ?, ?) ORDER BY id")
        #expect(try queue.read { db in try String.fetchAll(db, sql) } == ["a", "c", "d"])
        let names = ["b", "it's"]
        #expect(try queue.read { db in try Int.fetchAll(db, "SELECT id FROM students WHERE name IN (\(list: names))") } == [2])
        // An empty list matches nothing instead of failing to parse.
        let none: [Int] = []
        let empty: SQL = "SELECT name FROM students WHERE id IN (\(list: none))"
        #expect(empty.text == "SELECT name FROM students WHERE id IN (NULL)")
        #expect(try queue.read { db in try String.fetchAll(db, empty) } == [])
    }

    @Test func identifierInterpolation() throws {
        let queue = try DatabaseQueue()
        let table = "weird \"table\""
        let column = "select"
        let create: SQL = "CREATE TABLE \(identifier: table) (\(identifier: column) TEXT)"
        #expect(create.text == #"CREATE TABLE "weird ""table""" ("select" TEXT)"#)
        #expect(create.arguments.isEmpty)
        try queue.write { db in
            try db.execute(create)
            try db.execute("INSERT INTO \(identifier: table) (\(identifier: column)) VALUES (\("v"))")
        }
        #expect(try queue.read { db in try String.fetchOne(db, "SELECT \(identifier: column) FROM \(identifier: table)") } == "v")
        #expect("players".quotedIdentifier == "\"players\"")
    }

    @Test func fragmentsKeepTheirArgumentsInOrder() throws {
        let queue = try makeQueue()
        try queue.write { db in
            for name in ["a", "b", "c"] { try db.execute("INSERT INTO students (name) VALUES (\(name))") }
        }
        let condition: SQL = "id > \(1)"
        var query: SQL = "SELECT name FROM students WHERE \(condition) AND name <> \("c")"
        query = query + " ORDER BY id LIMIT \(10)"
        #expect(query.text == "SELECT name FROM students WHERE id > ? AND name <> ? ORDER BY id LIMIT ?")
        #expect(query.arguments.map(\.databaseValue) == [.integer(1), .text("c"), .integer(10)])
        #expect(try queue.read { db in try String.fetchAll(db, query) } == ["b"])
        let verbatim = SQL(verbatim: "SELECT COUNT(*) FROM students")
        #expect(try queue.read { db in try Int.fetchOne(db, verbatim) } == 3)
    }

    @Test func interpolatesEveryValueType() throws {
        let queue = try DatabaseQueue()
        let date = Date(timeIntervalSince1970: 0)
        let uuid = UUID()
        let optional: Int? = nil
        let row = try queue.read { db in
            let sql: SQL = "SELECT \(true), \(1.5), \(Data([9])), \(date), \(uuid), \(optional)"
            return try db.fetchOne(sql: sql.text, arguments: sql.statementArguments) { $0.copyValues() }
        }
        #expect(
            row == [
                .integer(1), .real(1.5), .blob(Data([9])), .text("1970-01-01 00:00:00.000"), .text(uuid.uuidString.lowercased()), .null,
            ])
    }

    @Test func multiStatementExecuteWithPositionalArguments() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO students (id, name) VALUES (?, ?);
                    INSERT INTO students (id, name) VALUES (?, 'fixed');
                    UPDATE students SET name = name || ? WHERE id = ?;
                    """, arguments: [1, "a", 2, "!", 1])
        }
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM students ORDER BY id") } == ["a!", "fixed"])
    }

    @Test func multiStatementExecuteWithSQLInterpolation() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try db.execute("INSERT INTO students (name) VALUES (\("x")); INSERT INTO students (name) VALUES (\("y"))")
        }
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM students ORDER BY id") } == ["x", "y"])
    }

    @Test func multiStatementExecuteWithTooManyOrTooFewArguments() throws {
        let queue = try makeQueue()
        let tooMany = #expect(throws: DatabaseError.self) {
            try queue.write { db in
                try db.execute(
                    sql: "INSERT INTO students (name) VALUES (?); INSERT INTO students (name) VALUES (?)", arguments: ["a", "b", "c"])
            }
        }
        #expect(tooMany?.resultCode == .range)
        #expect(tooMany?.message.contains("2 parameter(s), 3 given") == true)
        let tooFew = #expect(throws: DatabaseError.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO students (name) VALUES (?); INSERT INTO students (name) VALUES (?)", arguments: ["a"])
            }
        }
        #expect(tooFew?.resultCode == .range)
        // Both writes were rolled back.
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM students") } == 0)
    }

    @Test func multiStatementExecuteWithNamedArguments() throws {
        let queue = try makeQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO students (id, name) VALUES (:id, :name);
                    UPDATE students SET name = upper(name) WHERE id = :id;
                    """, arguments: [":id": 7, ":name": "zoe"])
        }
        #expect(try queue.read { db in try String.fetchOne(db, sql: "SELECT name FROM students WHERE id = 7") } == "ZOE")
    }
}
