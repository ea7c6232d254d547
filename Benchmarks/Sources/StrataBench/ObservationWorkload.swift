import BenchSupport
import Foundation

// The observation workloads (Strata's StrataObservation against GRDB's ValueObservation):
//
// - observation-write-overhead: W one-row write transactions (`INSERT INTO target`, each its own
//   `write`) while N live observations observe *other* tables (N = 0, 1, 10, 100, 1,000). What
//   a commit costs when many screens observe data the commit does not touch. Each (library, N)
//   pair has its own database and its observers stay alive for the whole run; the pairs take
//   turns within every iteration, so machine noise weighs on all of them alike. The C API
//   (BEGIN IMMEDIATE / INSERT / COMMIT with prepared statements) gives the floor.
// - observation-latency: the time from the end of a `write` (the commit has returned) to the
//   consumer of an async sequence receiving the value that includes it, median over C commits;
//   compared with the time of the same fetch run alone in a `read` (ratio latency / fetch).
//   Every sample is a real async delivery: the consumer task iterates the library's async
//   sequence and stamps the time when the new value arrives; the writer waits for that stamp
//   (outside the timed region) before the next commit.

/// Observation counts of the write-overhead workload.
func observerCounts(quick: Bool) -> [Int] { quick ? [0, 10, 1_000] : [0, 1, 10, 100, 1_000] }

/// A library taking part in the write-overhead workload, on its own database file.
protocol WriteOverheadContender: AnyObject {
    var name: String { get }
    /// Opens the database and creates `target` and the other tables.
    func open(path: String) throws
    /// Starts `count` observations of the other tables (never `target`) and returns once each
    /// has delivered its first value and is registered for its real region.
    func startObservers(count: Int) throws
    /// Untimed: empties `target` and checkpoints.
    func reset() throws
    /// Timed: `count` one-row write transactions on `target`.
    func writeRows(count: Int) throws
    func close()
}

/// A library taking part in the latency workload.
protocol LatencyContender: AnyObject {
    var name: String { get }
    /// Opens the database, creates and fills `feed`, and starts the observation of the latest
    /// rows of `feed` with a consumer task.
    func open(path: String) throws
    /// Commits one row (a `write`; its id is known in advance, so the probe expects it before
    /// the commit and no delivery can be missed), then waits until the consumer received the value that
    /// includes it. Returns the seconds from the end of the `write` (it returned) to the
    /// receipt, and from the start of the `write` (it was called) to the receipt.
    func commitAndWait() throws -> (fromWriteEnd: Double, fromWriteStart: Double)
    /// Timed by the caller: the observed fetch alone, in a `read`. Returns its row count.
    func fetchAlone() throws -> Int
    func close()
}

enum ObservationSchema {
    static let otherTableCount = 10
    static let createSQL: [String] = {
        var statements = ["CREATE TABLE IF NOT EXISTS target (id INTEGER PRIMARY KEY, value INTEGER NOT NULL, label TEXT NOT NULL)"]
        for index in 0..<otherTableCount {
            statements.append("CREATE TABLE IF NOT EXISTS other_\(index) (id INTEGER PRIMARY KEY, value INTEGER NOT NULL)")
            statements.append("INSERT INTO other_\(index) (value) SELECT \(index) WHERE NOT EXISTS (SELECT 1 FROM other_\(index))")
        }
        return statements
    }()
    static let insertTargetSQL = "INSERT INTO target (value, label) VALUES (?, 'a label of some length')"
    static let resetSQL = ["DELETE FROM target", "PRAGMA wal_checkpoint(TRUNCATE)"]
    /// What observer `index` fetches: a count over one of the other tables.
    static func observedSQL(_ index: Int) -> String { "SELECT COUNT(*) FROM other_\(index % otherTableCount)" }

    static let feedCreateSQL = [
        "CREATE TABLE IF NOT EXISTS feed (id INTEGER PRIMARY KEY, value INTEGER NOT NULL, label TEXT NOT NULL)",
        "INSERT INTO feed (value, label) SELECT value, 'row ' || value FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < 1000) SELECT value FROM n) WHERE NOT EXISTS (SELECT 1 FROM feed)",
    ]
    /// The observed value of the latency workload: the 50 latest rows of `feed`, as structs.
    static let feedSelectSQL = "SELECT id, value, label FROM feed ORDER BY id DESC LIMIT 50"
    static let feedInsertSQL = "INSERT INTO feed (id, value, label) VALUES (?, ?, 'a new row')"
    /// Rows of `feed` before the first commit (ids 1...1000).
    static let feedSeedCount: Int64 = 1_000
}

/// The id of the newest row a consumer must see, and when it saw it.
final class LatencyProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var expected: Int64 = .max
    private var receivedAt: ContinuousClock.Instant?
    private let received = DispatchSemaphore(value: 0)
    private(set) var failure: (any Error)?

    /// Called by the consumer with the newest id of each value it receives.
    func consumer(received newestID: Int64) {
        let now = ContinuousClock.now
        lock.lock()
        let matches = newestID >= expected && receivedAt == nil
        if matches { receivedAt = now }
        lock.unlock()
        if matches { received.signal() }
    }

    func consumer(failed error: any Error) {
        lock.lock(); failure = error; lock.unlock()
        received.signal()
    }

    func expect(_ id: Int64) {
        lock.lock(); expected = id; receivedAt = nil; lock.unlock()
    }

    /// Waits (untimed) for the consumer, then returns the seconds from the end and from the
    /// start of the write to receipt.
    func wait(
        writeStart: ContinuousClock.Instant, writeEnd: ContinuousClock.Instant
    ) throws -> (fromWriteEnd: Double, fromWriteStart: Double) {
        guard received.wait(timeout: .now() + 30) == .success else {
            throw BenchFailure("the observation did not deliver a committed value within 30 s")
        }
        lock.lock(); defer { lock.unlock() }
        if let failure { throw failure }
        guard let receivedAt else { throw BenchFailure("woken without a value") }
        return (seconds(receivedAt - writeEnd), seconds(receivedAt - writeStart))
    }
}

/// Waits for a count of first values.
final class ReadyCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var remaining: Int
    private let done = DispatchSemaphore(value: 0)
    private var failure: (any Error)?

    init(_ count: Int) { remaining = count }

    func arrived() {
        lock.lock()
        remaining -= 1
        let finished = remaining == 0
        lock.unlock()
        if finished { done.signal() }
    }

    func failed(_ error: any Error) {
        lock.lock(); failure = error; lock.unlock()
        done.signal()
    }

    func wait() throws {
        lock.lock()
        let nothingToWait = remaining <= 0
        lock.unlock()
        if nothingToWait { return }
        guard done.wait(timeout: .now() + 120) == .success else { throw BenchFailure("observers did not start within 120 s") }
        lock.lock(); defer { lock.unlock() }
        if let failure { throw failure }
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

struct ObservationMeasurement {
    var workload: String
    var library: String
    /// Observers (write overhead) or commits (latency).
    var parameter: Int
    /// Writes per run (write overhead); 0 for latency.
    var writes: Int
    var seconds: [Double]
    /// The fetch alone (latency only).
    var fetchSeconds: [Double] = []
    /// From the start of the `write` call to receipt (latency only).
    var fromWriteStartSeconds: [Double] = []

    var median: Double { Measurement.median(seconds) }
    var fetchMedian: Double { Measurement.median(fetchSeconds) }
    var fromWriteStartMedian: Double { Measurement.median(fromWriteStartSeconds) }
    var p90: Double { Measurement.percentile(seconds, 0.9) }
}

extension Measurement {
    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return 0 }
        let s = values.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let s = values.sorted()
        return s[Swift.min(s.count - 1, Int((Double(s.count - 1) * fraction).rounded()))]
    }
}

func observationWorkloadsSelected(_ options: Options) -> Bool {
    options.filters.isEmpty || options.filters.contains { "observation-write-overhead".contains($0) || "observation-latency".contains($0) }
}

func observationLibrarySelected(_ name: String, _ options: Options) -> Bool {
    guard let libraries = options.libraries else { return true }
    if name == "grdb" { return libraries.contains { $0.hasPrefix("grdb") } }
    return libraries.contains(name)
}

/// Runs the selected observation workloads; returns their measurements.
func runObservationWorkloads(_ options: Options, directory: String) throws -> [ObservationMeasurement] {
    var results: [ObservationMeasurement] = []
    if options.runs(workload: "observation-write-overhead") {
        results += try runWriteOverhead(options, directory: directory)
    }
    if options.runs(workload: "observation-latency") {
        results += try runLatency(options, directory: directory)
    }
    return results
}

private func runWriteOverhead(_ options: Options, directory: String) throws -> [ObservationMeasurement] {
    let writes = options.quick ? 1_000 : 10_000
    let iterations = options.iterations ?? (options.quick ? 3 : 7)
    let warmUp = 1
    var cases: [(contender: any WriteOverheadContender, observers: Int)] = []
    func add(_ make: () -> any WriteOverheadContender, observers: Int) throws {
        let contender = make()
        guard observationLibrarySelected(contender.name, options) else { return }
        let path = directory + "/observation-\(contender.name)-\(observers).sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try contender.open(path: path)
        let started = ContinuousClock.now
        try contender.startObservers(count: observers)
        if observers > 0 {
            log("  started \(observers) \(contender.name) observers in \(ContinuousClock.now - started)")
        }
        cases.append((contender, observers))
    }
    try add({ SQLiteCWriteContender() }, observers: 0)
    for count in observerCounts(quick: options.quick) {
        try add({ StrataObservationContender() }, observers: count)
        try add({ GRDBObservationContender() }, observers: count)
    }
    defer { for entry in cases { entry.contender.close() } }

    var samples = Array(repeating: [Double](), count: cases.count)
    let clock = ContinuousClock()
    for round in 0..<(warmUp + iterations) {
        // The cases take turns within each round, in an order that rotates, so that neither a
        // slow start nor a neighbour's build favours one of them.
        for offset in 0..<cases.count {
            let index = (offset + round) % cases.count
            let contender = cases[index].contender
            try contender.reset()
            let elapsed = try clock.measure { try contender.writeRows(count: writes) }
            if round >= warmUp { samples[index].append(seconds(elapsed)) }
        }
    }
    var results: [ObservationMeasurement] = []
    for (index, entry) in cases.enumerated() {
        let measurement = ObservationMeasurement(
            workload: "observation-write-overhead", library: entry.contender.name, parameter: entry.observers,
            writes: writes, seconds: samples[index])
        log(
            String(
                format: "  %-26@ %-7@ %5d observers  median %@", measurement.workload as NSString,
                measurement.library as NSString, entry.observers, formatSeconds(measurement.median) as NSString))
        results.append(measurement)
    }
    // Sorted by library, then observers, for the table.
    let order = ["sqlite-c", "strata", "grdb"]
    return results.sorted {
        (order.firstIndex(of: $0.library) ?? 9, $0.parameter) < (order.firstIndex(of: $1.library) ?? 9, $1.parameter)
    }
}

private func runLatency(_ options: Options, directory: String) throws -> [ObservationMeasurement] {
    let commits = options.quick ? 50 : 200
    let warmUp = options.quick ? 5 : 20
    let contenders: [any LatencyContender] = [StrataLatencyContender(), GRDBLatencyContender()]
        .filter { observationLibrarySelected($0.name, options) }
    var results: [ObservationMeasurement] = []
    for contender in contenders {
        let path = directory + "/latency-\(contender.name).sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        try contender.open(path: path)
    }
    defer { for contender in contenders { contender.close() } }
    var latencies = Array(repeating: [Double](), count: contenders.count)
    var fromStarts = Array(repeating: [Double](), count: contenders.count)
    var fetches = Array(repeating: [Double](), count: contenders.count)
    let clock = ContinuousClock()
    var rows = 0
    for sample in 0..<(warmUp + commits) {
        // Alternating libraries commit by commit, and the fetch alone right after each commit.
        for (index, contender) in contenders.enumerated() {
            let latency = try contender.commitAndWait()
            let fetch = try clock.measure { rows &+= try contender.fetchAlone() }
            if sample >= warmUp {
                latencies[index].append(latency.fromWriteEnd)
                fromStarts[index].append(latency.fromWriteStart)
                fetches[index].append(seconds(fetch))
            }
        }
    }
    for (index, contender) in contenders.enumerated() {
        let measurement = ObservationMeasurement(
            workload: "observation-latency", library: contender.name, parameter: commits, writes: 0,
            seconds: latencies[index], fetchSeconds: fetches[index], fromWriteStartSeconds: fromStarts[index])
        log(
            String(
                format: "  %-26@ %-7@ latency median %@, fetch alone %@", measurement.workload as NSString,
                contender.name as NSString, formatSeconds(measurement.median) as NSString,
                formatSeconds(measurement.fetchMedian) as NSString))
        results.append(measurement)
    }
    return results
}

// MARK: - Reports

func renderObservationTables(_ results: [ObservationMeasurement]) -> String {
    var output: [String] = []
    let overhead = results.filter { $0.workload == "observation-write-overhead" }
    if !overhead.isEmpty {
        let writes = overhead.first!.writes
        output.append(
            "observation-write-overhead: \(writes) one-row write transactions on `target` while N observations watch other tables")
        output.append("")
        var rows: [[String]] = []
        for result in overhead {
            let zero = overhead.first { $0.library == result.library && $0.parameter == 0 }
            let c = overhead.first { $0.library == "sqlite-c" }
            let grdb = overhead.first { $0.library == "grdb" && $0.parameter == result.parameter }
            rows.append([
                "observation-write-overhead", "\(result.parameter)", result.library,
                formatSeconds(result.median), formatSeconds(result.median / Double(writes)),
                formatSeconds(Measurement.percentile(result.seconds, 0)), formatSeconds(result.seconds.max() ?? 0),
                "\(result.seconds.count)",
                zero.map { String(format: "%.3fx", result.median / $0.median) } ?? "-",
                c.map { String(format: "%.2fx", result.median / $0.median) } ?? "-",
                grdb.map { String(format: "%.2fx", result.median / $0.median) } ?? "-",
            ])
        }
        output.append(
            renderGrid(
                headers: [
                    "workload", "observers", "library", "median", "per write", "min", "max", "iter", "x N=0", "x sqlite-c", "x grdb",
                ],
                rows: rows, rightAligned: [1, 3, 4, 5, 6, 7, 8, 9, 10], groupBy: 2))
    }
    let latency = results.filter { $0.workload == "observation-latency" }
    if !latency.isEmpty {
        if !output.isEmpty { output.append("") }
        output.append(
            "observation-latency: from the return of a one-row `write` to the consumer receiving the new value (async sequence), vs the same fetch alone in a `read`;"
        )
        output.append(
            "\"from write call\" counts from the start of the `write` instead (GRDB runs the fetch's snapshot acquisition inside the write)."
        )
        output.append("")
        let grdb = latency.first { $0.library == "grdb" }
        let rows = latency.map { result in
            [
                "observation-latency", "\(result.parameter)", result.library,
                formatSeconds(result.median), formatSeconds(result.p90), formatSeconds(result.fromWriteStartMedian),
                formatSeconds(result.fetchMedian),
                String(format: "%.2fx", result.median / result.fetchMedian),
                grdb.map { String(format: "%.2fx", result.median / $0.median) } ?? "-",
            ]
        }
        output.append(
            renderGrid(
                headers: [
                    "workload", "commits", "library", "latency median", "latency p90", "from write call", "fetch alone", "latency/fetch",
                    "x grdb",
                ],
                rows: rows, rightAligned: [1, 3, 4, 5, 6, 7, 8], groupBy: nil))
    }
    return output.joined(separator: "\n")
}

/// A plain text table; a blank line whenever column `groupBy` goes back to a previous value.
func renderGrid(headers: [String], rows: [[String]], rightAligned: Set<Int>, groupBy: Int?) -> String {
    let widths = headers.indices.map { column in
        ([headers[column]] + rows.map { $0[column] }).map(\.count).max() ?? 0
    }
    func line(_ cells: [String]) -> String {
        cells.enumerated().map { pad($0.element, widths[$0.offset], right: rightAligned.contains($0.offset)) }
            .joined(separator: "  ")
    }
    var output = [line(headers), String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1))]
    var previous: String?
    for row in rows {
        if let groupBy, let previous, previous != row[groupBy] { output.append("") }
        previous = groupBy.map { row[$0] }
        output.append(line(row))
    }
    return output.joined(separator: "\n")
}
