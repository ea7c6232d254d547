import BenchSupport
import Foundation

// strata-bench: Strata against the raw SQLite C API and GRDB, same schema, same data, same
// process. See Benchmarks/README.md.

setvbuf(stdout, nil, _IOLBF, 0)

func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

let options: Options
do {
    options = try Options.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    log("\(error)")
    exit(2)
}

// StrataAssets against zlib itself (AssetsWorkload.swift); alone when it is the only one selected.
if try runAssetsWorkloadIfSelected(options) { exit(0) }
// The live cloud's JSON bodies read and written (WireWorkload.swift), when selected.
if try runWireWorkloadIfSelected(options) { exit(0) }
// StrataSync against the same rows without sync (SyncWorkload.swift), when selected.
// Through blockingAwait, not top-level `await`: an async top level makes the main thread park in
// libdispatch's main-queue loop, which valgrind 3.19 cannot run (it crashes at start-up), and
// callgrind profiles are how this package's hot paths are measured.
if try blockingAwait({ try await runSyncMemoryWorkloadIfSelected(options) }) { exit(0) }
if try blockingAwait({ try await runSyncWorkloadIfSelected(options) }) { exit(0) }

/// Workloads that touch rows one key at a time do at most this many.
let keyedCap = 100_000
/// Concurrent reads fetch whole tables; larger tables only make the run longer.
let concurrentCap = 100_000

let allContenders: [Contender] = [
    SQLiteCContender(),
    StrataContender(),
    StrataTableContender(),
    GRDBContender<GItem>(name: "grdb-record"),
    GRDBFastContender(),
    GRDBContender<GCodableItem>(name: "grdb-codable"),
    SQLiteNIOContender(),
]
let contenders = allContenders.filter { options.libraries?.contains($0.name) ?? true }
if contenders.isEmpty {
    log("no library selected; the libraries are \(allContenders.map(\.name).joined(separator: ", "))")
    exit(2)
}

let sizes = options.effectiveSizes.sorted()
let maxSize = sizes.last!
let machine = machineDescription()
let commit = gitCommit()
let runDate = isoDate()
let loadAtStart = loadAverage()
let rowWorkloadNames = [
    "fetch-structs", "insert", "fetch-by-key", "update-by-key", "delete-by-key",
    "concurrent-reads-1", "concurrent-reads-2", "concurrent-reads-4",
]
let runsRowWorkloads = rowWorkloadNames.contains { options.runs(workload: $0) }

let directory: String
if let chosen = options.directory {
    directory = chosen
} else {
    directory = NSTemporaryDirectory() + "strata-bench-\(ProcessInfo.processInfo.processIdentifier)"
}
try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)

func removeDatabase(_ path: String) {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
}

log("strata-bench: \(machine), commit \(commit), SQLite \(sqliteVersion()), \(runDate), load average \(loadAtStart)")
/// sqlite-nio runs on the SQLite it bundles, not on the system's that the others share.
let sqliteNIO = contenders.contains { $0.name == "sqlite-nio" } ? sqliteNIOVersion() : nil
let otherSQLite = sqliteNIO.map { " (sqlite-nio: its own SQLite \($0))" } ?? ""
log(
    "libraries: \(contenders.map(\.name).joined(separator: ", "))\(otherSQLite); sizes: \(sizes.map(formatSize).joined(separator: ", ")); files in \(directory)"
)

// The same rows for everyone: generated once, written once with the C API to a seed table,
// then each library gets its own copy of that file.
var started = ContinuousClock.now
let sourceRows = runsRowWorkloads ? Dataset.rows(count: maxSize) : []
if runsRowWorkloads {
    let seedPath = directory + "/seed.sqlite"
    try createSeedDatabase(path: seedPath, rows: sourceRows)
    for contender in contenders {
        let path = directory + "/\(contender.name).sqlite"
        removeDatabase(path)
        try FileManager.default.copyItem(atPath: seedPath, toPath: path)
        try contender.open(path: path)
    }
    log("seeded \(formatSize(maxSize)) rows in \(ContinuousClock.now - started)")
}

struct Workload {
    let name: String
    /// Whether the workload runs at this size.
    let accepts: (Int) -> Bool
    /// Untimed, once per library and size, before the warm-up.
    let prepare: (Contender, Int) throws -> Void
    /// Untimed, before every run.
    let setUp: (Contender, Int) throws -> Void
    /// Timed.
    let run: (Contender, Int) throws -> Int
}

let noSetUp: (Contender, Int) throws -> Void = { _, _ in }
let readsPerTask = options.quick ? 1 : 4

var workloads: [Workload] = [
    Workload(
        name: "fetch-structs", accepts: { _ in true },
        prepare: { contender, size in try contender.resetItems(count: size) },
        setUp: noSetUp,
        run: { contender, _ in try contender.fetchAll() }),
    Workload(
        name: "insert", accepts: { _ in true },
        prepare: { contender, size in contender.load(Array(sourceRows.prefix(size))) },
        setUp: { contender, _ in try contender.resetItems(count: 0) },
        run: { contender, _ in try contender.insertAll() }),
    Workload(
        name: "fetch-by-key", accepts: { _ in true },
        prepare: { contender, size in try contender.resetItems(count: size) },
        setUp: noSetUp,
        run: { contender, size in try contender.fetchByKey(Dataset.shuffledKeys(count: size).prefixArray(keyedCap)) }),
    Workload(
        name: "update-by-key", accepts: { $0 <= keyedCap },
        prepare: { contender, size in
            try contender.resetItems(count: size)
            // Every row changes: the key stays, the other columns get another row's values.
            let keys = Dataset.shuffledKeys(count: size).prefixArray(keyedCap)
            contender.load(
                keys.enumerated().map { offset, key in
                    var row = sourceRows[(offset + 1) % size]
                    row.id = key
                    return row
                })
        },
        setUp: noSetUp,
        run: { contender, _ in try contender.updateByKey() }),
    Workload(
        name: "delete-by-key", accepts: { $0 <= keyedCap },
        prepare: noSetUp,
        setUp: { contender, size in try contender.resetItems(count: size) },
        run: { contender, size in try contender.deleteByKey(Dataset.shuffledKeys(count: size).prefixArray(keyedCap)) }),
]
for tasks in [1, 2, 4] {
    workloads.append(
        Workload(
            name: "concurrent-reads-\(tasks)", accepts: { $0 <= concurrentCap },
            prepare: { contender, size in try contender.resetItems(count: size) },
            setUp: noSetUp,
            run: { contender, size in try contender.concurrentReads(tasks: tasks, readsPerTask: readsPerTask, rowCount: size) }))
}

extension Array {
    func prefixArray(_ count: Int) -> [Element] { Array(prefix(count)) }
}

var results: [Measurement] = []
started = ContinuousClock.now
for workload in workloads where options.runs(workload: workload.name) {
    for size in sizes where workload.accepts(size) {
        var checks: [(String, Int)] = []
        for contender in contenders where contender.supports(workload.name) {
            try workload.prepare(contender, size)
            // Key lists are built outside the timed region for every library alike: the
            // closures above only slice a precomputed array.
            let keys = Dataset.shuffledKeys(count: size).prefixArray(keyedCap)
            let body: () throws -> Int
            switch workload.name {
            case "fetch-by-key": body = { try contender.fetchByKey(keys) }
            case "delete-by-key": body = { try contender.deleteByKey(keys) }
            default: body = { try workload.run(contender, size) }
            }
            let (seconds, check) = try measure(
                warmUp: options.warmUpCount(size: size), iterations: options.iterationCount(size: size),
                setUp: { try workload.setUp(contender, size) }, body)
            let measurement = Measurement(workload: workload.name, size: size, library: contender.name, seconds: seconds, check: check)
            results.append(measurement)
            checks.append((contender.name, check))
            log(
                String(
                    format: "  %-18@ %8@  %-13@ median %@", workload.name as NSString, formatSize(size) as NSString,
                    contender.name as NSString, formatSeconds(measurement.median) as NSString))
            contender.load([])
        }
        if Set(checks.map(\.1)).count > 1 {
            log("  warning: the libraries disagree on \(workload.name) \(size): \(checks)")
        }
    }
}
log("measured in \(ContinuousClock.now - started)")
for contender in contenders { contender.close() }

// StrataObservation against GRDB's ValueObservation (ObservationWorkload.swift).
var observationResults: [ObservationMeasurement] = []
if observationWorkloadsSelected(options) {
    started = ContinuousClock.now
    observationResults = try runObservationWorkloads(options, directory: directory)
    log("observation workloads measured in \(ContinuousClock.now - started)")
}
let loadAtEnd = loadAverage()
if options.directory == nil {
    try? FileManager.default.removeItem(atPath: directory)
}

print("")
print("strata-bench — \(machine) — commit \(commit) — SQLite \(sqliteVersion())\(otherSQLite) — \(runDate)")
print("load average at start \(loadAtStart), at end \(loadAtEnd)")
if !results.isEmpty {
    print("Seconds are per run of the whole workload (N rows); ratios compare medians.")
    print("")
    print(renderTable(results))
}
if !observationResults.isEmpty {
    print("")
    print(renderObservationTables(observationResults))
}
let header = ReportHeader(
    machine: machine, commit: commit, date: runDate, sqlite: sqliteVersion(), sqliteNIO: sqliteNIO,
    load: "\(loadAtStart) at start, \(loadAtEnd) at end", quick: options.quick)

if let path = options.jsonPath {
    try renderJSON(header, results: results, observation: observationResults).write(toFile: path, atomically: true, encoding: .utf8)
    log("wrote \(path)")
}
if let path = options.svgPath {
    try renderSVG(header, results: results, observation: observationResults).write(toFile: path, atomically: true, encoding: .utf8)
    log("wrote \(path)")
}
