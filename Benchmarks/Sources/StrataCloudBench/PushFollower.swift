import BenchSupport
import Foundation
import Synchronization

/// Device B of the push measurement, on its own as another device is: it fetches on every
/// change hint, whatever A is doing, and after each fetch looks for the row of the sample it
/// was told to expect. Its stream is connected before ``init(devices:hints:clock:)`` returns.
final class PushFollower {
    /// A sample's row found on B: when the hint that started the fetch came, and when the fetch
    /// that made the row visible ended.
    struct Arrival: Sendable {
        var key: String
        var hinted: ContinuousClock.Instant
        var fetched: ContinuousClock.Instant
    }

    /// The sample B looks for; shared with B's task.
    private final class ExpectedKey: Sendable {
        let key = Mutex<String?>(nil)
    }

    private let expected = ExpectedKey()
    private let task: Task<Void, Never>
    private var iterator: AsyncStream<Result<Arrival, BenchFailure>>.Iterator

    init(devices: PushDevices, hints: AsyncStream<Void>, clock: ContinuousClock) async throws {
        let (arrivals, arrival) = AsyncStream.makeStream(of: Result<Arrival, BenchFailure>.self)
        let (connected, connection) = AsyncStream.makeStream(of: Void.self)
        let expected = self.expected
        let engine = devices.laptop.engine
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
                    arrival.yield(.success(Arrival(key: key, hinted: hinted, fetched: fetched)))
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

    /// Tells B which sample's row to look for after its next fetches.
    func expect(_ key: String) {
        expected.key.withLock { $0 = key }
    }

    /// The next row B found.
    func arrival() async throws -> Arrival {
        guard let result = await iterator.next() else { throw BenchFailure("B's change-hint stream ended") }
        return try result.get()
    }

    func stop() {
        task.cancel()
    }
}
