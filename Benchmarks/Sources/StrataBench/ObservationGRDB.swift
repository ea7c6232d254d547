import Foundation
import GRDB

// GRDB's side of the observation workloads: ValueObservation on a DatabasePool. The write
// overhead starts each observation with `start(in:scheduling:)` on a private serial queue (the
// main queue never runs in this tool); the latency iterates `values(in:)`, GRDB's async
// sequence (scheduled on the cooperative pool).

private func openGRDBPool(path: String) throws -> DatabasePool {
    var configuration = Configuration()
    configuration.label = "bench-observation"
    // A busy timeout, as the C connections (5 s) and Strata (its default) have: GRDB's default
    // fails at once, and a reader recovering the WAL index after a checkpoint briefly blocks a
    // writer's BEGIN IMMEDIATE.
    configuration.busyMode = .timeout(5)
    configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
    }
    return try DatabasePool(path: path, configuration: configuration)
}

final class GRDBObservationContender: WriteOverheadContender {
    let name = "grdb"
    private var pool: DatabasePool!
    private var cancellables: [AnyDatabaseCancellable] = []
    private let queue = DispatchQueue(label: "bench.grdb-observers")

    func open(path: String) throws {
        pool = try openGRDBPool(path: path)
        try pool.write { db in
            for sql in ObservationSchema.createSQL { try db.execute(sql: sql) }
        }
    }

    func startObservers(count: Int) throws {
        let ready = ReadyCounter(count)
        for index in 0..<count {
            let sql = ObservationSchema.observedSQL(index)
            let firstSeen = FirstFlag()
            let observation = ValueObservation.tracking { db in try Int.fetchOne(db, sql: sql) ?? 0 }
            cancellables.append(
                observation.start(
                    in: pool, scheduling: .async(onQueue: queue),
                    onError: { ready.failed($0) },
                    onChange: { _ in if firstSeen.take() { ready.arrived() } }))
        }
        try ready.wait()
        // GRDB installs each observation's transaction observer with an asynchronous write
        // after the first fetch; a synchronous write job after them all waits for those.
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
        for cancellable in cancellables { cancellable.cancel() }
        cancellables = []
        try? pool?.close()
        pool = nil
    }
}

final class FirstFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var taken = false
    func take() -> Bool {
        lock.lock(); defer { lock.unlock() }
        if taken { return false }
        taken = true
        return true
    }
}

private struct GFeedRow: FetchableRecord, Sendable {
    var id: Int64
    var value: Int64
    var label: String

    init(row: Row) {
        id = row[0]
        value = row[1]
        label = row[2]
    }
}

private func fetchFeed(_ db: Database) throws -> [GFeedRow] {
    try GFeedRow.fetchAll(db, sql: ObservationSchema.feedSelectSQL)
}

final class GRDBLatencyContender: LatencyContender {
    let name = "grdb"
    private var pool: DatabasePool!
    private var consumer: Task<Void, Never>?
    private let probe = LatencyProbe()
    private var nextID: Int64 = ObservationSchema.feedSeedCount

    func open(path: String) throws {
        pool = try openGRDBPool(path: path)
        try pool.write { db in
            for sql in ObservationSchema.feedCreateSQL { try db.execute(sql: sql) }
        }
        let ready = ReadyCounter(1)
        let probe = self.probe
        let pool: DatabasePool = self.pool
        consumer = Task.detached {
            var first = true
            do {
                for try await rows in ValueObservation.tracking(fetchFeed).values(in: pool) {
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
        try? pool?.close()
        pool = nil
    }
}
