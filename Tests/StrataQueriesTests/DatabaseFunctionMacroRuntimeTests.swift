import Foundation
import StrataQueries
import StrataSQLite
import Testing

// MARK: - Functions under test

@DatabaseFunction
func greeting(for name: String) -> String { "Hello, \(name)!" }

@DatabaseFunction(isDeterministic: true)
func isWinner(score: Int, of target: Int) -> Bool { score >= target }

struct NegativeScoreError: Error, CustomStringConvertible {
    var score: Int
    var description: String { "negative score \(score)" }
}

@DatabaseFunction
func checkedScore(_ score: Int) throws -> Int {
    guard score >= 0 else { throw NegativeScoreError(score: score) }
    return score
}

@DatabaseFunction(as: ((Date.UnixTimeRepresentation, Int) -> Date.UnixTimeRepresentation).self, isDeterministic: true)
func addingDays(_ date: Date, _ days: Int) -> Date {
    date.addingTimeInterval(Double(days) * 86_400)
}

@DatabaseFunction("strata_initials")
func initials(of name: String) -> String {
    String(name.split(separator: " ").compactMap(\.first))
}

@DatabaseFunction
func nickname(_ name: String?) -> String? {
    name.map { "\($0)y" }
}

enum Scoring {
    @DatabaseFunction(isDeterministic: true)
    static func bonus(for streak: Int) -> Int { streak * 2 }
}

@DatabaseFunction(isDeterministic: true)
public func publicDouble(_ value: Int) -> Int { value * 2 }

@DatabaseFunction
private func privateTriple(_ value: Int) -> Int { value * 3 }

final class Ledger {
    @DatabaseFunction("ledger_balance")
    static func balance(credit: Double, debit: Double) throws -> Double {
        guard debit <= credit else { throw NegativeScoreError(score: Int(credit - debit)) }
        return credit - debit
    }
}

struct Tally {}

extension Tally {
    @DatabaseFunction(as: ((UUID.BytesRepresentation) -> String).self)
    fileprivate static func shortID(_ id: UUID) -> String { String(id.uuidString.prefix(8)) }
}

// MARK: - Tests

@Suite(.timeLimit(.minutes(5))) struct DatabaseFunctionMacroRuntimeTests {
    /// An in-memory database with every function above installed.
    func makeDatabase() throws -> DatabaseQueue {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db in
            try db.add(function: $greeting)
            try db.add(function: $isWinner)
            try db.add(function: $checkedScore)
            try db.add(function: $addingDays)
            try db.add(function: $initials)
            try db.add(function: $nickname)
            try db.add(function: Scoring.$bonus)
        }
        return queue
    }

    func fetchInt(_ queue: DatabaseQueue, _ expression: some QueryExpression) throws -> Int? {
        let fragment = expression.queryFragment
        return try queue.read { db in
            try Int.fetchOne(db, sql: "SELECT " + fragment.sql, arguments: fragment.statementArguments)
        }
    }

    func fetchString(_ queue: DatabaseQueue, _ expression: some QueryExpression) throws -> String? {
        let fragment = expression.queryFragment
        return try queue.read { db in
            try String.fetchOne(db, sql: "SELECT " + fragment.sql, arguments: fragment.statementArguments)
        }
    }

    @Test func plainFunction() throws {
        let queue = try makeDatabase()
        let call = $greeting(for: "Ada")
        #expect(call.queryFragment.sql == #""greeting"(?)"#)
        #expect(call.queryFragment.bindings == [.text("Ada")])
        #expect(try fetchString(queue, call) == "Hello, Ada!")
        #expect($greeting.name == "greeting")
        #expect($greeting.databaseFunction.argumentCount == 1)
        #expect(!$greeting.databaseFunction.isDeterministic)
    }

    @Test func deterministicFunction() throws {
        let queue = try makeDatabase()
        let call = $isWinner(score: 3, of: 2)
        #expect(call.queryFragment.sql == #""isWinner"(?, ?)"#)
        #expect(call.queryFragment.bindings == [.integer(3), .integer(2)])
        #expect(try fetchInt(queue, call) == 1)
        #expect(try fetchInt(queue, $isWinner(score: 1, of: 2)) == 0)
        #expect($isWinner.databaseFunction.isDeterministic)

        // Only a deterministic function may appear in an index expression.
        try queue.writeWithoutTransaction { db in
            try db.execute(sql: "CREATE TABLE games (score INTEGER, target INTEGER, name TEXT)")
            try db.execute(sql: #"CREATE INDEX games_winner ON games ("isWinner"(score, target))"#)
            #expect(throws: DatabaseError.self) {
                try db.execute(sql: #"CREATE INDEX games_greeting ON games ("greeting"(name))"#)
            }
        }
    }

    @Test func callsAcceptColumnsAndNestedCalls() throws {
        let queue = try makeDatabase()
        let score = #sql("7", as: Int.self)
        let call = $isWinner(score: Scoring.$bonus(for: score), of: 10)
        #expect(call.queryFragment.sql == #""isWinner"("bonus"(7), ?)"#)
        #expect(try fetchInt(queue, call) == 1)
    }

    @Test func throwingFunction() throws {
        let queue = try makeDatabase()
        #expect(try fetchInt(queue, $checkedScore(5)) == 5)
        let error = #expect(throws: DatabaseError.self) {
            try fetchInt(queue, $checkedScore(-1))
        }
        #expect(error?.message.contains("negative score -1") == true)
    }

    @Test func representations() throws {
        let queue = try makeDatabase()
        let start = Date(timeIntervalSince1970: 1_000_000)
        let call = $addingDays(Date.UnixTimeRepresentation(queryOutput: start), 2)
        #expect(call.queryFragment.bindings == [.real(1_000_000), .integer(2)])
        let fragment = call.queryFragment
        let seconds = try queue.read { db in
            try Double.fetchOne(db, sql: "SELECT " + fragment.sql, arguments: fragment.statementArguments)
        }
        #expect(seconds == 1_172_800)
        // The stored form is what SQL passes in: a REAL number of seconds.
        let fromSQL = try queue.read { db in
            try Double.fetchOne(db, sql: #"SELECT "addingDays"(0.5, 1)"#)
        }
        #expect(fromSQL == 86_400.5)
    }

    @Test func customSQLName() throws {
        let queue = try makeDatabase()
        let call = $initials(of: "Grace Brewster Hopper")
        #expect(call.queryFragment.sql == #""strata_initials"(?)"#)
        #expect(try fetchString(queue, call) == "GBH")
        let raw = try queue.read { db in try String.fetchOne(db, sql: "SELECT strata_initials('Ada Lovelace')") }
        #expect(raw == "AL")
    }

    @Test func optionalArgumentsAndResult() throws {
        let queue = try makeDatabase()
        let fromNull = try queue.read { db in try String?.fetchOne(db, sql: #"SELECT "nickname"(NULL)"#) }
        #expect(fromNull == .some(nil))
        // An optional parameter takes an optional expression.
        #expect(try fetchString(queue, $nickname(String?.some("Bill"))) == "Billy")
    }

    @Test func staticFunction() throws {
        let queue = try makeDatabase()
        #expect(try fetchInt(queue, Scoring.$bonus(for: 21)) == 42)
    }

    @Test func accessLevelsClassesAndExtensions() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db in
            try db.add(function: $publicDouble)
            try db.add(function: $privateTriple)
            try db.add(function: Ledger.$balance)
            try db.add(function: Tally.$shortID)
        }
        #expect(try fetchInt(queue, $publicDouble(4)) == 8)
        #expect(try fetchInt(queue, $privateTriple($publicDouble(1))) == 6)
        let balance = Ledger.$balance(credit: 10.5, debit: 0.5).queryFragment
        #expect(balance.sql == #""ledger_balance"(?, ?)"#)
        let value = try queue.read { db in
            try Double.fetchOne(db, sql: "SELECT " + balance.sql, arguments: balance.statementArguments)
        }
        #expect(value == 10)
        #expect(throws: DatabaseError.self) { try fetchInt(queue, Ledger.$balance(credit: 1, debit: 2)) }
        let id = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!
        #expect(try fetchString(queue, Tally.$shortID(UUID.BytesRepresentation(queryOutput: id))) == "6BA7B810")
    }

    @Test func wrongArgumentTypeFailsTheStatement() throws {
        let queue = try makeDatabase()
        let error = #expect(throws: DatabaseError.self) {
            try queue.read { db in try Int.fetchOne(db, sql: #"SELECT "isWinner"('three', 2)"#) }
        }
        #expect(error?.message.contains("isWinner") == true)
    }

    @Test func removingAFunction() throws {
        let queue = try makeDatabase()
        try queue.writeWithoutTransaction { db in try db.remove(function: $greeting) }
        #expect(throws: DatabaseError.self) {
            try fetchString(queue, $greeting(for: "Ada"))
        }
    }

    @Test func swiftFunctionsStillWork() throws {
        #expect(isWinner(score: 3, of: 2))
        #expect(!isWinner(score: 1, of: 2))
        #expect(greeting(for: "Ada") == "Hello, Ada!")
        #expect(throws: NegativeScoreError.self) { try checkedScore(-1) }
        #expect(addingDays(Date(timeIntervalSince1970: 0), 1) == Date(timeIntervalSince1970: 86_400))
        #expect(initials(of: "Ada Lovelace") == "AL")
        #expect(Scoring.bonus(for: 2) == 4)
    }
}

@Suite(.timeLimit(.minutes(5))) struct SQLMacroRuntimeTests {
    func fetch<Value: DatabaseValueConvertible>(_ type: Value.Type, _ expression: some QueryExpression) throws -> Value? {
        let queue = try DatabaseQueue()
        let fragment = expression.queryFragment
        return try queue.read { db in
            try Value.fetchOne(db, sql: "SELECT " + fragment.sql, arguments: fragment.statementArguments)
        }
    }

    @Test func boundValueAndRawText() throws {
        let expression = #sql("\(5) + \(raw: "1")", as: Int.self)
        #expect(expression.queryFragment.sql == "? + 1")
        #expect(expression.queryFragment.bindings == [.integer(5)])
        #expect(try fetch(Int.self, expression) == 6)
    }

    @Test func inferredType() throws {
        let expression: SQLQueryExpression<String> = #sql("upper(\("ada")) || \(bind: "!")")
        #expect(expression.queryFragment.sql == "upper(?) || ?")
        #expect(try fetch(String.self, expression) == "ADA!")
    }

    @Test func quotesCommentsAndMultilineLiterals() throws {
        let name = "it's"
        let expression = #sql(
            """
            (SELECT "it's (quoted)" -- a comment with ( and '
               FROM (SELECT \(name) AS "it's (quoted)"))
            """,
            as: String.self
        )
        #expect(expression.queryFragment.bindings == [.text("it's")])
        #expect(try fetch(String.self, expression) == "it's")
    }

    @Test func splicesExpressionsAndQuotedIdentifiers() throws {
        let inner = #sql("\(2) * \(3)", as: Int.self)
        let expression = #sql("(SELECT \(inner) + \(quote: "x") FROM (SELECT 10 AS \(quote: "x")))", as: Int.self)
        #expect(expression.queryFragment.sql == #"(SELECT ? * ? + "x" FROM (SELECT 10 AS "x"))"#)
        #expect(try fetch(Int.self, expression) == 16)
    }

    @Test func databaseFunctionCallInsideSQL() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db in try db.add(function: $isWinner) }
        let expression = #sql("CASE WHEN \($isWinner(score: 9, of: 5)) THEN 'won' ELSE 'lost' END", as: String.self)
        let fragment = expression.queryFragment
        let result = try queue.read { db in
            try String.fetchOne(db, sql: "SELECT " + fragment.sql, arguments: fragment.statementArguments)
        }
        #expect(result == "won")
    }
}
