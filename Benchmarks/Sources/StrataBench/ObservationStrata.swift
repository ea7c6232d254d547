import Foundation
import StrataObservation
import StrataSQLite

// Strata's side of the observation workloads: `observe(in: pool) { db in ... }` async
// sequences, each iterated by its own task.

private func openStrataPool(path: String) throws -> DatabasePool {
    var configuration = Configuration()
    configuration.label = "bench-observation"
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    // To compare the hand-off path (0) with inline re-fetches, or to keep them inline under
    // valgrind, where every fetch takes far longer than the default budget.
    if let budget = ProcessInfo.processInfo.environment["STRATA_BENCH_INLINE_BUDGET_US"].flatMap(Int.init) {
        configuration.inlineObservationBudget = .microseconds(budget)
    }
    return try DatabasePool(path: path, configuration: configuration)
}

final class StrataObservationContender: WriteOverheadContender {
    let name = "strata"
    private var pool: DatabasePool!
    private var consumers: [Task<Void, Never>] = []

    func open(path: String) throws {
        pool = try openStrataPool(path: path)
        try pool.write { db in
            for sql in ObservationSchema.createSQL { try db.execute(sql: sql) }
        }
    }

    func startObservers(count: Int) throws {
        let ready = ReadyCounter(count)
        let pool: DatabasePool = self.pool
        for index in 0..<count {
            let sql = ObservationSchema.observedSQL(index)
            consumers.append(
                Task.detached {
                    var first = true
                    do {
                        for try await _ in observe(in: pool, { db in try Int.fetchOne(db, sql: sql) ?? 0 }) {
                            if first {
                                first = false
                                ready.arrived()
                            }
                        }
                    } catch is CancellationError {
                    } catch {
                        ready.failed(error)
                    }
                })
        }
        try ready.wait()
        // The driver narrows its registration from the whole database to the fetch's region
        // after delivering the first value; one more write job settles any still in flight.
        try pool.writeWithoutTransaction { _ in }
    }

    func reset() throws {
        try pool.writeWithoutTransaction { db in
            for sql in ObservationSchema.resetSQL { try db.execute(sql: sql) }
        }
    }

    func writeRows(count: Int) throws {
        let pool: DatabasePool = self.pool
        for value in 0..<count {
            try pool.write { db in try db.execute(sql: ObservationSchema.insertTargetSQL, arguments: [value]) }
        }
    }

    func close() {
        for consumer in consumers { consumer.cancel() }
        consumers = []
        pool?.close()
        pool = nil
    }
}

private struct FeedRow: Sendable {
    var id: Int64
    var value: Int64
    var label: String
}

private func fetchFeed(_ db: Database) throws -> [FeedRow] {
    try db.fetchAll(sql: ObservationSchema.feedSelectSQL) { row in
        FeedRow(id: try row[0], value: try row[1], label: try row[2])
    }
}

final class StrataLatencyContender: LatencyContender {
    let name = "strata"
    private var pool: DatabasePool!
    private var consumer: Task<Void, Never>?
    private let probe = LatencyProbe()
    private var nextID: Int64 = ObservationSchema.feedSeedCount

    func open(path: String) throws {
        pool = try openStrataPool(path: path)
        try pool.write { db in
            for sql in ObservationSchema.feedCreateSQL { try db.execute(sql: sql) }
        }
        let ready = ReadyCounter(1)
        let probe = self.probe
        let pool: DatabasePool = self.pool
        consumer = Task.detached {
            var first = true
            do {
                for try await rows in observe(in: pool, fetchFeed) {
                    if first {
                        first = false
                        ready.arrived()
                    }
                    probe.consumer(received: rows.first?.id ?? 0)
                }
            } catch is CancellationError {
            } catch {
                ready.failed(error)
                probe.consumer(failed: error)
            }
        }
        try ready.wait()
        try pool.writeWithoutTransaction { _ in }
    }

    func commitAndWait() throws -> (fromWriteEnd: Double, fromWriteStart: Double) {
        nextID += 1
        let id = nextID
        probe.expect(id)
        let writeStart = ContinuousClock.now
        try pool.write { db in try db.execute(sql: ObservationSchema.feedInsertSQL, arguments: [id, id]) }
        return try probe.wait(writeStart: writeStart, writeEnd: ContinuousClock.now)
    }

    func fetchAlone() throws -> Int {
        try pool.read { db in try fetchFeed(db).count }
    }

    func close() {
        consumer?.cancel()
        consumer = nil
        pool?.close()
        pool = nil
    }
}
