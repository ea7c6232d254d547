import BenchSupport
import Foundation
import StrataObservation
import StrataSQLite
import Synchronization

/// Device B of the push measurement, on its own as another device is: it fetches on every
/// change hint, whatever A is doing, and after each fetch looks for the row of the sample it
/// was told to expect. Beside that, a live query on B's database (StrataObservation's
/// `observe`, as an app's list of rows) notes when the row becomes visible there: at the
/// commit of the page that brought it, before the fetch has saved its tokens. Its stream is
/// connected before ``init(devices:hints:clock:)`` returns.
final class PushFollower {
    /// A sample's row found on B: when the hint that started the fetch came, when a live
    /// query on B first saw the row, and when the fetch that brought it ended.
    struct Arrival: Sendable {
        var key: String
        var hinted: ContinuousClock.Instant
        var visible: ContinuousClock.Instant
        var fetched: ContinuousClock.Instant
    }

    /// The sample B looks for; shared with B's task.
    private final class ExpectedKey: Sendable {
        let key = Mutex<String?>(nil)
    }

    private let expected = ExpectedKey()
    private let task: Task<Void, Never>
    private let database: DatabasePool
    private let clock: ContinuousClock
    private var iterator: AsyncStream<Result<Arrival, BenchFailure>>.Iterator
    /// The live query of the sample expected, and when it saw the row.
    private var watch: (task: Task<Void, Never>, seen: AsyncStream<ContinuousClock.Instant>.Iterator)?

    init(devices: PushDevices, hints: AsyncStream<Void>, clock: ContinuousClock) async throws {
        let (arrivals, arrival) = AsyncStream.makeStream(of: Result<Arrival, BenchFailure>.self)
        let (connected, connection) = AsyncStream.makeStream(of: Void.self)
        let expected = self.expected
        let engine = devices.laptop.engine
        database = devices.laptop.database
        self.clock = clock
        task = Task {
            var hints = hints.makeAsyncIterator()
            // Every stream yields a hint when it connects.
            _ = await hints.next()
            connection.finish()
            while await hints.next() != nil {
                let hinted = clock.now
                do {
                    try await engine.fetchChanges()
                    let fetched = clock.now
                    guard let key = expected.key.withLock({ $0 }), try await devices.arrived(key) else { continue }
                    expected.key.withLock { if $0 == key { $0 = nil } }
                    arrival.yield(.success(Arrival(key: key, hinted: hinted, visible: fetched, fetched: fetched)))
                } catch {
                    arrival.yield(.failure(BenchFailure("B's fetch failed: \(error)")))
                    break
                }
            }
            arrival.finish()
        }
        for await _ in connected {}
        iterator = arrivals.makeAsyncIterator()
    }

    /// Tells B which sample's row to look for after its next fetches, and starts the live
    /// query that notes when the row becomes visible; returns once that query has read B's
    /// database without the row.
    func expect(_ key: String) async throws {
        watch?.task.cancel()
        expected.key.withLock { $0 = key }
        let id = "\(key)-0"
        let observation = observe(in: database) { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM projects WHERE id = ?", arguments: [id]) ?? 0
        }
        let (seen, sight) = AsyncStream.makeStream(of: ContinuousClock.Instant.self)
        let (ready, readiness) = AsyncStream.makeStream(of: Bool.self)
        let clock = self.clock
        let task = Task {
            do {
                var first = true
                for try await count in observation {
                    if first { readiness.yield(count == 0) }
                    first = false
                    if count > 0 {
                        sight.yield(clock.now)
                        break
                    }
                }
            } catch {}
            readiness.finish()
            sight.finish()
        }
        var readyIterator = ready.makeAsyncIterator()
        guard await readyIterator.next() == true else {
            task.cancel()
            throw BenchFailure("B's live query for \(key) found the row before A wrote it, or failed")
        }
        watch = (task, seen.makeAsyncIterator())
    }

    /// The next row B found, with when the live query saw it.
    func arrival() async throws -> Arrival {
        guard let result = await iterator.next() else { throw BenchFailure("B's change-hint stream ended") }
        var arrival = try result.get()
        guard var seen = watch?.seen, let visible = await seen.next() else {
            throw BenchFailure("B's live query for \(arrival.key) ended without seeing its row")
        }
        watch = nil
        arrival.visible = visible
        return arrival
    }

    func stop() {
        task.cancel()
        watch?.task.cancel()
    }
}
