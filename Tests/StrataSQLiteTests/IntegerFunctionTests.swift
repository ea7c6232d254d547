import Foundation
import StrataSQLite
import StrataTestSupport
import Synchronization
import Testing

/// `Database.addIntegerFunction` and the text key guard's skip condition: the functions capture
/// triggers call on every row, read without boxing.
@Suite(.timeLimit(.minutes(5))) struct IntegerFunctionTests {
    @Test func argumentsAreIntegersOnlyAndNilIsNull() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.addIntegerFunction(named: "pick", argumentCount: -1) { arguments in
                guard let index = arguments.int64(at: 0) else { return nil }
                return arguments.int64(at: Int(index))
            }
            #expect(try String.fetchOne(db, sql: "SELECT quote(pick(1, 42))") == "42")
            #expect(try String.fetchOne(db, sql: "SELECT quote(pick(1, -9223372036854775808))") == "-9223372036854775808")
            // Anything but an integer is nil, and nil is NULL.
            for value in ["4.5", "'7'", "x'07'", "NULL"] {
                #expect(try String.fetchOne(db, sql: "SELECT quote(pick(1, \(value)))") == "NULL", "\(value)")
            }
            // Past the last argument, and before the first.
            #expect(try String.fetchOne(db, sql: "SELECT quote(pick(2, 42))") == "NULL")
            #expect(try String.fetchOne(db, sql: "SELECT quote(pick(-1, 42))") == "NULL")
            #expect(try String.fetchOne(db, sql: "SELECT quote(pick())") == "NULL")
        }
    }

    @Test func theArgumentCountIsEnforcedAndAFunctionIsReplaced() throws {
        let queue = try DatabaseQueue()
        try queue.writeWithoutTransaction { db throws in
            try db.addIntegerFunction(named: "answer", argumentCount: 0) { _ in 41 }
            try db.addIntegerFunction(named: "answer", argumentCount: 0) { _ in 42 }
            #expect(try Int.fetchOne(db, sql: "SELECT answer()") == 42)
            let error = #expect(throws: DatabaseError.self) { try Int.fetchOne(db, sql: "SELECT answer(1)") }
            #expect(error?.message.contains("wrong number of arguments to function answer()") == true)
        }
    }

    @Test func eachCallRunsTheBodyAgain() throws {
        let queue = try DatabaseQueue()
        let counter = Mutex<Int64>(0)
        try queue.writeWithoutTransaction { db throws in
            try db.addIntegerFunction(named: "tick", argumentCount: 0) { _ in
                counter.withLock { value in
                    value += 1
                    return value
                }
            }
            #expect(try Int.fetchAll(db, sql: "SELECT tick() FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3)") == [1, 2, 3])
        }
    }

    @Test func theBodyIsReleasedWithTheConnection() throws {
        final class Marker: Sendable {}
        weak var weakMarker: Marker?
        do {
            let queue = try DatabaseQueue()
            let marker = Marker()
            weakMarker = marker
            try queue.writeWithoutTransaction { db throws in
                try db.addIntegerFunction(named: "held", argumentCount: 0) { _ in withExtendedLifetime(marker) { 1 } }
                #expect(try Int.fetchOne(db, sql: "SELECT held()") == 1)
            }
            queue.close()
        }
        #expect(weakMarker == nil)
    }

    @Test func aSkippedKeyGuardAnswersZeroWithoutCheckingTheKey() throws {
        let queue = try DatabaseQueue()
        let skipping = Mutex(false)
        try queue.writeWithoutTransaction { db throws in
            try db.addTextKeyGuard(named: "guard_key", skippedWhen: { skipping.withLock { $0 } })
            try db.addTextKeyGuard(named: "plain_guard")
            #expect(try Int.fetchOne(db, sql: "SELECT guard_key('ok', 't', 'id')") == 1)
            for bad in ["x'61FF'", "CAST(x'61FF' AS TEXT)", "12", "NULL"] {
                let error = #expect(throws: DatabaseError.self) { try Int.fetchOne(db, sql: "SELECT guard_key(\(bad), 't', 'id')") }
                #expect(error?.message.contains("synced table \"t\": primary key \"id\" must hold valid UTF-8 text") == true, "\(bad)")
            }
            skipping.withLock { $0 = true }
            for key in ["'ok'", "x'61FF'", "CAST(x'61FF' AS TEXT)", "12", "NULL"] {
                #expect(try Int.fetchOne(db, sql: "SELECT guard_key(\(key), 't', 'id')") == 0, "\(key)")
            }
            // A guard without the condition checks every key.
            #expect(throws: DatabaseError.self) { try Int.fetchOne(db, sql: "SELECT plain_guard(CAST(x'61FF' AS TEXT), 't', 'id')") }
            #expect(try Int.fetchOne(db, sql: "SELECT plain_guard('ok', 't', 'id')") == 1)
        }
    }
}
