import Foundation
import StrataSQLite
import Testing

@Suite(.timeLimit(.minutes(5))) struct ErrorTests {
    func makeSchoolQueue() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.write { db throws in
            try db.execute(
                sql: """
                    CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
                    CREATE TABLE members (id INTEGER PRIMARY KEY, teamID INTEGER NOT NULL REFERENCES teams(id), name TEXT NOT NULL);
                    INSERT INTO teams (id, name) VALUES (1, 'Red');
                    """)
        }
        return queue
    }

    @Test func badSQLNamesTheSQL() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.read { db in try Int.fetchOne(db, sql: "SELEC 1 FROM nowhere") }
        }
        #expect(error?.resultCode == .error)
        #expect(error?.sql == "SELEC 1 FROM nowhere")
        #expect(error?.message.contains("syntax error") == true)
        #expect(error?.description.contains("SELEC 1 FROM nowhere") == true)
        #expect(error?.description.contains("SQLite error 1") == true)
    }

    @Test func missingTableNamesTheSQL() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.execute(sql: "INSERT INTO ghosts VALUES (?)", arguments: [1]) }
        }
        #expect(error?.message.contains("no such table: ghosts") == true)
        #expect(error?.sql == "INSERT INTO ghosts VALUES (?)")
    }

    @Test func badSQLInMultiStatementExecuteNamesTheSQL() throws {
        let queue = try DatabaseQueue()
        let sql = "CREATE TABLE a (x); INSERT INTO a VALUES (1); SELEKT * FROM a"
        let error = #expect(throws: DatabaseError.self) { try queue.write { db in try db.execute(sql: sql) } }
        #expect(error?.description.contains("SELEKT") == true)
        // The write was rolled back: the table created by the first statement is gone.
        #expect(try queue.read { db in try db.tableExists("a") } == false)
    }

    @Test func runtimeErrorInALaterStatementNamesThatStatement() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db in
                try db.execute(
                    sql: """
                        CREATE TABLE a (x UNIQUE);
                        INSERT INTO a VALUES (?);
                        INSERT INTO a VALUES (?)
                        """, arguments: [1, 1])
            }
        }
        #expect(error?.extendedResultCode == .constraintUnique)
        // The statement's own text, without the newline and indentation before it.
        #expect(error?.sql == "INSERT INTO a VALUES (?)")
        #expect(error?.arguments?.description == "[1]")
    }

    @Test func uniqueConstraintViolation() throws {
        let queue = try makeSchoolQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db throws in
                try db.execute(sql: "INSERT INTO teams (id, name) VALUES (?, ?)", arguments: [2, "Red"])
            }
        }
        #expect(error?.resultCode == .constraint)
        #expect(error?.extendedResultCode == .constraintUnique)
        #expect(error?.message.contains("UNIQUE constraint failed: teams.name") == true)
        #expect(error?.description.contains("INSERT INTO teams (id, name) VALUES (?, ?)") == true)
        #expect(error?.description.contains("with arguments [2, 'Red']") == true)
        // The `~=` pattern matches primary and extended codes.
        if let error {
            #expect(ResultCode.constraint ~= error)
            #expect(ResultCode.constraintUnique ~= error)
            #expect(!(ResultCode.constraintNotNull ~= error))
        }
    }

    @Test func primaryKeyConstraintViolation() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db throws in
                try db.execute(sql: "CREATE TABLE t (code TEXT PRIMARY KEY); INSERT INTO t VALUES ('a'); INSERT INTO t VALUES ('a')")
            }
        }
        #expect(error?.extendedResultCode == .constraintPrimaryKey)
    }

    @Test func foreignKeyConstraintViolation() throws {
        let queue = try makeSchoolQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db throws in
                try db.execute(sql: "INSERT INTO members (teamID, name) VALUES (?, ?)", arguments: [99, "Zed"])
            }
        }
        #expect(error?.extendedResultCode == .constraintForeignKey)
        #expect(error?.message.contains("FOREIGN KEY constraint failed") == true)
        #expect(error?.description.contains("[99, 'Zed']") == true)
    }

    @Test func notNullConstraintViolation() throws {
        let queue = try makeSchoolQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db throws in
                try db.execute(sql: "INSERT INTO members (teamID, name) VALUES (?, ?)", arguments: [1, nil as String?])
            }
        }
        #expect(error?.extendedResultCode == .constraintNotNull)
        #expect(error?.message.contains("NOT NULL constraint failed: members.name") == true)
        #expect(error?.description.contains("with arguments [1, NULL]") == true)
    }

    @Test func checkConstraintViolation() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: DatabaseError.self) {
            try queue.write { db throws in
                try db.execute(sql: "CREATE TABLE t (n INTEGER CHECK (n > 0))")
                try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [-1])
            }
        }
        #expect(error?.extendedResultCode == .constraintCheck)
    }

    @Test func nullIntoNonOptionalNamesColumnAndSQL() throws {
        let queue = try DatabaseQueue()
        let sql = "SELECT 1 AS id, NULL AS score"
        let error = #expect(throws: RowDecodingError.self) {
            try queue.read { db in try db.fetchAll(sql: sql) { row in try row[1] as Int } }
        }
        #expect(error?.columnIndex == 1)
        #expect(error?.columnName == "score")
        #expect(error?.storedValue == .null)
        #expect(error?.expectedType == "Int")
        #expect(error?.sql == sql)
        #expect(error?.description == "could not decode column 1 \"score\" (NULL NULL) as Int — in `\(sql)`")
    }

    @Test func textIntoIntNamesColumnAndSQL() throws {
        let queue = try makeSchoolQueue()
        let sql = "SELECT id, name FROM teams"
        let error = #expect(throws: RowDecodingError.self) {
            try queue.read { db in try db.fetchOne(sql: sql) { row in (try row[0] as Int, try row[1] as Int) } }
        }
        #expect(error?.columnIndex == 1)
        #expect(error?.columnName == "name")
        #expect(error?.storedValue == .text("Red"))
        #expect(error?.sql == sql)
        #expect(error?.description.contains("column 1 \"name\" (TEXT 'Red') as Int") == true)
        #expect(error?.description.contains(sql) == true)
    }

    @Test func decodingErrorFromValueFetchNamesColumnZero() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: RowDecodingError.self) {
            try queue.read { db in try Int.fetchAll(db, sql: "SELECT 'x' AS label") }
        }
        #expect(error?.columnIndex == 0)
        #expect(error?.columnName == "label")
    }

    @Test func wrongArgumentCount() throws {
        let queue = try makeSchoolQueue()
        try queue.write { db throws in
            let tooFew = #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO teams (id, name) VALUES (?, ?)", arguments: [5])
            }
            #expect(tooFew?.resultCode == .range)
            #expect(tooFew?.message.contains("2 parameter(s), 1 given") == true)
            #expect(tooFew?.sql == "INSERT INTO teams (id, name) VALUES (?, ?)")
            let tooMany = #expect(throws: DatabaseError.self) {
                try Int.fetchOne(db, sql: "SELECT ?", arguments: [1, 2])
            }
            #expect(tooMany?.resultCode == .range)
            let missing = #expect(throws: DatabaseError.self) {
                try Int.fetchOne(db, sql: "SELECT ?")
            }
            #expect(missing?.message.contains("1 parameter(s), 0 given") == true)
            // Nothing was inserted by the failed statements.
            #expect(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM teams") == 1)
        }
    }

    @Test func statementsAfterAnErrorStillWork() throws {
        let queue = try makeSchoolQueue()
        try queue.write { db throws in
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO teams (id, name) VALUES (?, ?)", arguments: [1, "Dup"])
            }
            // The failed cached statement was reset and can be reused.
            try db.execute(sql: "INSERT INTO teams (id, name) VALUES (?, ?)", arguments: [2, "Blue"])
            #expect(try String.fetchAll(db, sql: "SELECT name FROM teams ORDER BY id") == ["Red", "Blue"])
        }
    }

    @Test func makeStatementRejectsSeveralStatementsAndEmptySQL() throws {
        let queue = try DatabaseQueue()
        try queue.read { db throws in
            #expect(throws: DatabaseError.self) { try db.makeStatement(sql: "SELECT 1; SELECT 2") }
            let empty = #expect(throws: DatabaseError.self) { try db.makeStatement(sql: "  -- nothing\n") }
            #expect(empty?.resultCode == .misuse)
        }
    }

    @Test func accessAfterCloseThrows() throws {
        let queue = try DatabaseQueue()
        queue.close()
        let error = #expect(throws: DatabaseAccessError.self) {
            try queue.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
        }
        #expect(error?.kind == .closed)
    }

    @Test func openingAnInvalidPathThrows() throws {
        let error = #expect(throws: DatabaseError.self) {
            try DatabaseQueue(path: "/nonexistent-directory-\(UUID().uuidString)/db.sqlite")
        }
        #expect(error?.resultCode == .cannotOpen)
        #expect(error?.message.contains("could not open database") == true)
    }
}
