import BenchSupport
import Foundation
import StrataSQLite

/// Target 4: push latency, from a commit on device A to the row being visible on device B,
/// while `idle` other devices (each another user) hold an open change-hint stream to the same
/// instance. A commits one row and sends; the service hears the commit through
/// LISTEN/NOTIFY and pushes a hint down B's stream; B fetches and reads the row. Both devices
/// hold `rows` rows first (synced before the clock starts): a push must not cost more on a
/// device that holds data (a query that reads every record's metadata would).
enum PushPhase {
    static func run(databaseURL: URL, samples: Int, idle: Int, rows: Int, runID: String, results: inout Results) async throws {
        print("push latency: \(samples) samples, \(idle) idle devices subscribed, \(rows) rows held")
        let folder = try makeTemporaryFolder("push")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let instance = try await CloudInstance.start(databaseURL: databaseURL)
        let subscribers = try await IdleSubscribers(baseURL: instance.baseURL, count: idle, runID: runID)
        defer { subscribers.cancel() }

        let container = CloudSetup.container(instance.baseURL, user: "push-\(runID)")
        let devices = try await PushDevices(folder: folder, container: container, rows: rows)
        let (phone, laptop) = (devices.phone, devices.laptop)
        let clock = ContinuousClock()

        // Serial: B fetches once A's send has returned, as earlier rounds measured it (their
        // `push_p50_ms`), and the parts of a push one after the other.
        var serial: [Double] = []
        var sends: [Double] = [], hintWaits: [Double] = [], fetches: [Double] = []
        do {
            var hints = container.changeHints().makeAsyncIterator()
            _ = await hints.next()
            // Five warm-up samples are not counted.
            for sample in -5..<samples {
                let key = "serial-\(sample)"
                let started = clock.now
                try await devices.commitAndSend(key)
                let sent = clock.now
                var (hinted, fetched) = (sent, sent)
                var visible = false
                while !visible {
                    guard await hints.next() != nil else { throw BenchFailure("B's change-hint stream ended") }
                    hinted = clock.now
                    try await laptop.engine.fetchChanges()
                    fetched = clock.now
                    visible = try await devices.arrived(key)
                }
                if sample >= 0 {
                    serial.append(seconds(clock.now - started) * 1_000)
                    sends.append(seconds(sent - started) * 1_000)
                    hintWaits.append(seconds(hinted - sent) * 1_000)
                    fetches.append(seconds(fetched - hinted) * 1_000)
                }
            }
        }

        // The target: B follows on its own, as another device does, fetching on every hint
        // whatever A is still doing (A writes the cloud's answers after the hint has left).
        // A sample's latency ends when a live query on B sees the row, as an app's list would;
        // the sample itself ends when the fetch that brought the row has returned, so the
        // next one starts with B idle, as before.
        let follower = try await PushFollower(devices: devices, hints: container.changeHints(), clock: clock)
        defer { follower.stop() }
        var latencies: [Double] = []
        var fetchesReturned: [Double] = []
        var hintsAfterCommit: [Double] = []
        for sample in -5..<samples {
            let key = "push-\(sample)"
            try await follower.expect(key)
            let started = clock.now
            try await devices.commitAndSend(key)
            let arrival = try await follower.arrival()
            guard arrival.key == key else { throw BenchFailure("B found \(arrival.key) while A sent \(key)") }
            if sample >= 0 {
                latencies.append(seconds(arrival.visible - started) * 1_000)
                fetchesReturned.append(seconds(arrival.fetched - started) * 1_000)
                hintsAfterCommit.append(seconds(arrival.hinted - started) * 1_000)
            }
        }
        // One small request alone, as the engine makes four of them per push: the service's
        // and PostgreSQL's share of a push, apart from the engines'.
        var requests: [Double] = []
        let database = container.privateDatabase
        var token = try await database.fetchDatabaseChanges(since: nil).token
        for _ in 0..<max(20, samples) {
            let started = clock.now
            token = try await database.fetchDatabaseChanges(since: token).token
            requests.append(seconds(clock.now - started) * 1_000)
        }
        results.add("push_small_request_p50_ms", percentile(requests.sorted(), 0.50), "ms")
        let sent = try await StrataRowWriter.count(in: phone.database)
        let arrived = try await StrataRowWriter.count(in: laptop.database)
        guard sent == arrived else { throw BenchFailure("push: device B has \(arrived) rows, device A \(sent)") }
        devices.close()
        subscribers.cancel()
        _ = try await instance.stop()

        latencies.sort()
        results.add("push_p50_ms", percentile(latencies, 0.50), "ms")
        results.add("push_p99_ms", percentile(latencies, 0.99), "ms")
        results.add("push_max_ms", latencies.last ?? 0, "ms")
        results.add("push_hint_after_commit_p50_ms", percentile(hintsAfterCommit.sorted(), 0.50), "ms")
        // What `push_p50_ms` measured until 2026-12-07: until B's fetch had returned, its
        // tokens saved after the row was visible.
        fetchesReturned.sort()
        results.add("push_fetch_returned_p50_ms", percentile(fetchesReturned, 0.50), "ms")
        results.add("push_fetch_returned_p99_ms", percentile(fetchesReturned, 0.99), "ms")
        serial.sort()
        results.add("push_serial_p50_ms", percentile(serial, 0.50), "ms")
        results.add("push_serial_p99_ms", percentile(serial, 0.99), "ms")
        results.add("push_commit_and_send_p50_ms", percentile(sends.sorted(), 0.50), "ms")
        results.add("push_hint_after_send_p50_ms", percentile(hintWaits.sorted(), 0.50), "ms")
        results.add("push_fetch_p50_ms", percentile(fetches.sorted(), 0.50), "ms")
    }

    /// The value below which `fraction` of the sorted `values` lie (nearest rank).
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up)) - 1
        return sorted[min(sorted.count - 1, max(0, rank))]
    }
}

/// `count` devices of other users, each holding an open change-hint stream and draining it,
/// as idle apps do. Ready once every stream has connected (each yields a hint on connect).
struct IdleSubscribers {
    let tasks: [Task<Void, Never>]

    init(baseURL: URL, count: Int, runID: String) async throws {
        let (connected, signal) = AsyncStream<Void>.makeStream()
        tasks = (0..<count).map { index in
            let hints = CloudSetup.container(baseURL, user: "idle-\(index)-\(runID)").changeHints()
            return Task {
                var first = true
                for await _ in hints {
                    if first { signal.yield() }
                    first = false
                }
            }
        }
        var ready = 0
        guard count > 0 else { return }
        for await _ in connected {
            ready += 1
            if ready == count { break }
        }
        if ready < count { throw BenchFailure("only \(ready) of \(count) idle streams connected") }
    }

    func cancel() {
        for task in tasks { task.cancel() }
    }
}
