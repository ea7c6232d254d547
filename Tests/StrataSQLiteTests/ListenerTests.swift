import CSQLite
import Foundation
import StrataSQLite
import StrataTestSupport
import Synchronization
import Testing

/// Several clients listen to one connection's hooks, authorizer and traces without breaking
/// observation.
@Suite(.timeLimit(.minutes(5))) struct ListenerTests {
    final class Log: TransactionListener, @unchecked Sendable {
        // Unchecked: only touched on the connection's executor, then read after the access.
        var events: [String] = []
        var refusesCommits = false

        func rowDidChange(_ change: RowChange) {
            events.append("\(change.kind) \(change.schemaName).\(change.tableName) \(change.rowID)")
        }
        func transactionWillCommit() throws {
            if refusesCommits { throw Refusal() }
        }
        func transactionDidCommit(_ db: Database) {
            events.append("commit, autocommit: \(!db.isInsideTransaction)")
        }
        func transactionDidRollback(_ db: Database) {
            events.append("rollback")
        }
    }

    struct Refusal: Error {}

    /// Hears only transaction ends.
    final class EndsOnly: TransactionListener, @unchecked Sendable {
        var events: [String] = []
        var observesRowChanges: Bool { false }
        func rowDidChange(_ change: RowChange) { events.append("row") }
        func transactionDidCommit(_ db: Database) { events.append("commit, autocommit: \(!db.isInsideTransaction)") }
    }

    @Test func aListenerThatDeclinesRowsHearsOnlyCommitsAndRollbacks() throws {
        let queue = try DatabaseQueue()
        let ends = EndsOnly()
        let rows = Log()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER)")
            db.add(transactionListener: ends)
            db.add(transactionListener: rows)
        }
        ends.events.removeAll()
        rows.events.removeAll()
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(ends.events == ["commit, autocommit: true"])
        #expect(rows.events == ["insert main.t 1", "commit, autocommit: true"])
    }

    @Test func rowsOfATableAndOfTheTableItsTriggerWritesAreBothAnnounced() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE t (a INTEGER);
                    CREATE TABLE audit (a INTEGER);
                    CREATE TABLE other (a INTEGER);
                    CREATE TRIGGER t_audit AFTER INSERT ON t BEGIN INSERT INTO audit VALUES (NEW.a); END;
                    """)
        }
        let announced = Mutex<[String]>([])
        var observations: [DatabaseChangeRegistration] = []
        for table in ["t", "audit", "other"] {
            observations.append(
                queue.observeChanges(in: DatabaseRegion(tables: [table])) {
                    announced.withLock { $0.append(table) }
                })
        }
        defer { observations.forEach { $0.cancel() } }
        try queue.write { db in
            try db.execute(sql: "INSERT INTO t VALUES (1), (2), (3)")
            try db.execute(sql: "INSERT INTO other VALUES (1)")
        }
        #expect(announced.withLock { $0.sorted() } == ["audit", "other", "t"])
    }

    @Test func transactionListenersHearRowsCommitsAndRollbacksBesideObservation() throws {
        try withTemporaryDatabasePath { path in
            let log = Log()
            var configuration = Configuration()
            configuration.prepareDatabase { db in
                if db.role == .writer { db.add(transactionListener: log) }
            }
            let pool = try DatabasePool(path: path, configuration: configuration)
            try pool.write { db in try db.execute(sql: "CREATE TABLE t (a INTEGER)") }
            let announced = SharedCounter()
            let observation = pool.observeChanges(in: DatabaseRegion(tables: ["t"])) {
                announced.value.add(1, ordering: .relaxed)
            }
            defer { observation.cancel() }
            log.events.removeAll()
            try pool.write { db in try db.execute(sql: "INSERT INTO t VALUES (1), (2)") }
            try pool.writeWithoutTransaction { db in
                try db.inTransaction {
                    try db.execute(sql: "UPDATE t SET a = 3")
                    return .rollback
                }
            }
            #expect(
                log.events == [
                    "insert main.t 1", "insert main.t 2", "commit, autocommit: true", "update main.t 1", "update main.t 2", "rollback",
                ])
            #expect(announced.value.load(ordering: .relaxed) == 1)
        }
    }

    @Test func aListenerCanRefuseACommit() throws {
        let log = Log()
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t (a INTEGER)")
            db.add(transactionListener: log)
        }
        log.refusesCommits = true
        #expect(throws: Refusal.self) {
            try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        }
        log.refusesCommits = false
        try queue.write { db in db.remove(transactionListener: log) }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM t") } == 0)
    }

    @Test func addedAuthorizersCoexistWithRegionRecording() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t (a INTEGER, secret TEXT); INSERT INTO t VALUES (1, 'x')") }
        let asked = Recorder<String>()
        try queue.read { db in
            let id = db.addAuthorizer { request in
                if request.action == SQLITE_READ, let table = request.firstArgument, let column = request.secondArgument {
                    asked.append("\(table).\(column)")
                    if column == "secret" { return .ignore }
                }
                return .allow
            }
            let (row, region) = try db.recordingReadRegion {
                try db.fetchOne(sql: "SELECT a, secret FROM t") { row in (try row[0] as Int, try row[1] as String?) }
            }
            #expect(row?.0 == 1)
            #expect(row?.1 == nil)  // ignored: read as NULL
            #expect(region.contains(QualifiedTable(schema: "main", name: "t")))
            db.removeAuthorizer(id)
            db.clearStatementCache()
            #expect(try String.fetchOne(db, sql: "SELECT secret FROM t") == "x")
        }
        #expect(asked.elements.contains("t.secret"))
    }

    @Test func severalTracesEachReceiveEveryStatement() throws {
        let queue = try DatabaseQueue()
        let first = Recorder<String>()
        let second = Recorder<String>()
        try queue.write { db in
            db.trace { first.append($0.expandedSQL) }
            let id = db.addTrace { second.append($0.expandedSQL) }
            try db.execute(sql: "SELECT ?", arguments: [1])
            db.trace(nil)  // stops the first only
            try db.execute(sql: "SELECT 2")
            db.removeTrace(id)
            try db.execute(sql: "SELECT 3")
        }
        #expect(first.elements.contains("SELECT 1"))
        #expect(!first.elements.contains("SELECT 2"))
        #expect(second.elements.contains("SELECT 1"))
        #expect(second.elements.contains("SELECT 2"))
        #expect(!second.elements.contains("SELECT 3"))
    }
}
