import BenchSupport
import Foundation

/// A measuring run: the selected phases in order, then the reports.
enum BenchRun {
    static func run(_ options: Options) async throws {
        let engineRows = options.engineRows ?? options.rows
        // Only the phases that run: their sizes are what the figures mean.
        let sizes = [
            ("first", "first sync \(options.rows) rows"), ("million", "million \(options.millionRows) rows"),
            ("engine", "engine \(engineRows) rows"),
            ("push", "push \(options.pushSamples) samples, \(options.idleDevices) idle devices, \(options.pushRows) rows held"),
            ("devices", "devices \(options.devices) × \(options.rowsPerDevice) rows"),
            ("latency", "long links \(options.latencyRows) rows at \(options.roundTrips.map(String.init).joined(separator: "/")) ms"),
        ].filter { options.runs($0.0) }.map(\.1).joined(separator: ", ")
        var header = ReportHeader(
            machine: machineDescription(), swift: swiftVersion(), commit: gitCommit(), date: isoDate(), loadAtStart: loadAverage(),
            sizes: sizes)
        header.printLines()
        var results = Results()
        let runID = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let cloudPhases = Options.phases.filter { $0 != "engine" && options.runs($0) }
        var databaseURL: URL?
        if !cloudPhases.isEmpty {
            if let server = options.serverURL {
                databaseURL = try await CloudSetup.createDatabase(server: server)
            } else {
                print("no PostgreSQL server (argument or $STRATA_TEST_POSTGRES): skipping \(cloudPhases.joined(separator: ", "))")
            }
        }
        do {
            try await runPhases(options, engineRows: engineRows, databaseURL: databaseURL, runID: runID, results: &results)
        } catch {
            if let databaseURL, let server = options.serverURL { try? await CloudSetup.dropDatabase(databaseURL, server: server) }
            throw error
        }
        // STRATA_BENCH_KEEP=1 keeps the database, as it keeps the engine's files.
        if let databaseURL, let server = options.serverURL, ProcessInfo.processInfo.environment["STRATA_BENCH_KEEP"] != "1" {
            try await CloudSetup.dropDatabase(databaseURL, server: server)
        }
        header.loadAtEnd = loadAverage()
        print("load     \(header.loadAtEnd) (1, 5, 15 min) at end")
        if let path = options.jsonPath { try renderJSON(header, results).write(toFile: path, atomically: true, encoding: .utf8) }
        if let path = options.svgPath { try renderSVG(header, results).write(toFile: path, atomically: true, encoding: .utf8) }
    }

    /// The selected phases, in order, on the run's database.
    private static func runPhases(
        _ options: Options, engineRows: Int, databaseURL: URL?, runID: String, results: inout Results
    ) async throws {
        if let databaseURL, options.runs("first") {
            try await FirstSyncPhase.run(databaseURL: databaseURL, rows: options.rows, runID: runID, results: &results)
        }
        if let databaseURL, options.runs("million") {
            try await MillionRowsPhase.run(databaseURL: databaseURL, rows: options.millionRows, runID: runID, results: &results)
        }
        if options.runs("engine") {
            try await EnginePhase.run(rows: engineRows, results: &results)
        }
        if let databaseURL, options.runs("push") {
            try await PushPhase.run(
                databaseURL: databaseURL, samples: options.pushSamples, idle: options.idleDevices, rows: options.pushRows, runID: runID,
                results: &results)
        }
        // After the push through the service, which it would otherwise share the process with.
        if options.runs("push") {
            try await EnginePushPhase.run(samples: options.pushSamples, rows: options.pushRows, results: &results)
        }
        if let databaseURL, options.runs("devices") {
            try await DevicesPhase.run(
                databaseURL: databaseURL, devices: options.devices, rowsPerDevice: options.rowsPerDevice, runID: runID,
                results: &results)
        }
        if let databaseURL, options.runs("latency") {
            try await LatencyPhase.run(
                databaseURL: databaseURL, rows: options.latencyRows, roundTrips: options.roundTrips, runID: runID, results: &results)
        }
    }
}
